//! Numeric literal decoding.

/// A decoded numeric literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Number {
    Int(i128),
    F32(u32),
    F64(u64),
}

fn digits(text: &str, radix: u32) -> Result<i128, &'static str> {
    if text.is_empty() {
        return Err("missing digits in integer literal");
    }
    let mut v: i128 = 0;
    for c in text.chars() {
        let d = c
            .to_digit(radix)
            .ok_or("invalid digit in integer literal")?;
        v = v
            .checked_mul(i128::from(radix))
            .and_then(|v| v.checked_add(i128::from(d)))
            .ok_or("integer literal out of range")?;
    }
    if v > i128::from(u64::MAX) {
        return Err("integer literal out of range");
    }
    Ok(v)
}

/// Decodes the raw text of a `Num` token.
pub(crate) fn parse_number(text: &str) -> Result<Number, &'static str> {
    let b = text.as_bytes();
    // Fast path: short plain decimals (no leading zero, so not octal).
    if b.len() <= 18 && b.first().is_some_and(|&c| c != b'0') && b.iter().all(u8::is_ascii_digit) {
        let mut v: i128 = 0;
        for &c in b {
            v = v * 10 + i128::from(c - b'0');
        }
        return Ok(Number::Int(v));
    }
    if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'f' | b'F' => {
                let hex = &text[2..];
                if hex.len() != 8 {
                    return Err("0f float literal needs exactly 8 hex digits");
                }
                return u32::from_str_radix(hex, 16)
                    .map(Number::F32)
                    .map_err(|_| "invalid hex digit in 0f float literal");
            }
            b'd' | b'D' => {
                let hex = &text[2..];
                if hex.len() != 16 {
                    return Err("0d float literal needs exactly 16 hex digits");
                }
                return u64::from_str_radix(hex, 16)
                    .map(Number::F64)
                    .map_err(|_| "invalid hex digit in 0d float literal");
            }
            _ => {}
        }
    }
    let is_float = !text.starts_with("0x")
        && !text.starts_with("0X")
        && (text.contains('.')
            || (text.bytes().any(|c| c == b'e' || c == b'E')
                && text
                    .bytes()
                    .all(|c| c.is_ascii_digit() || matches!(c, b'e' | b'E' | b'+' | b'-'))));
    if is_float {
        let v: f64 = text.parse().map_err(|_| "invalid float literal")?;
        #[allow(clippy::cast_possible_truncation)]
        return Ok(Number::F32((v as f32).to_bits()));
    }
    let body = text
        .strip_suffix('U')
        .or_else(|| text.strip_suffix('u'))
        .unwrap_or(text);
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        digits(h, 16)?
    } else if let Some(bin) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        digits(bin, 2)?
    } else if body.len() > 1 && body.starts_with('0') {
        digits(&body[1..], 8)?
    } else {
        digits(body, 10)?
    };
    Ok(Number::Int(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(parse_number("42"), Ok(Number::Int(42)));
        assert_eq!(parse_number("42U"), Ok(Number::Int(42)));
        assert_eq!(parse_number("0x1F"), Ok(Number::Int(31)));
        assert_eq!(
            parse_number("0xFFFFFFFFFFFFFFFF"),
            Ok(Number::Int(u64::MAX.into()))
        );
        assert!(parse_number("0x1FFFFFFFFFFFFFFFF").is_err());
        assert_eq!(parse_number("017"), Ok(Number::Int(15)));
        assert_eq!(parse_number("0"), Ok(Number::Int(0)));
        assert_eq!(parse_number("0b101"), Ok(Number::Int(5)));
        assert_eq!(parse_number("0f3F800000"), Ok(Number::F32(0x3F80_0000)));
        assert_eq!(
            parse_number("0d3FF0000000000000"),
            Ok(Number::F64(0x3FF0_0000_0000_0000))
        );
        assert_eq!(parse_number("1.0"), Ok(Number::F32(1.0f32.to_bits())));
        assert_eq!(parse_number("1.5e3"), Ok(Number::F32(1500.0f32.to_bits())));
        assert_eq!(parse_number("1e-3"), Ok(Number::F32(1e-3f32.to_bits())));
        assert!(parse_number("0f3F80").is_err());
        assert!(parse_number("09").is_err());
        assert!(parse_number("12abc").is_err());
        assert!(parse_number("99999999999999999999999999999999999999999").is_err());
    }
}
