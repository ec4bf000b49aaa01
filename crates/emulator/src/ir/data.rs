//! Initialized module-scope data: `.global` and `.const` variables with an initializer
//! (`__device__` tables, `__constant__` arrays, the strings nvcc writes for `assert` and
//! `printf`).
//!
//! Each such variable gets an address in the emulator's *data window* (see
//! [`super::Windows::data`]), so `mov.u64 %rd, table` yields a known address and a load
//! through it can return the initializer's bytes. Variables without an initializer keep an
//! unknown address, as before: nothing is known about their contents.

use ptx_parser::ast::{BinaryOp, Expr, Initializer, Module, StateSpace, UnaryOp, VarDecl};
use rustc_hash::FxHashMap;

/// Largest initialized variable whose bytes are kept (larger ones have unknown contents).
const MAX_VAR_BYTES: u64 = 16 << 20;
/// Largest data window laid out; variables past it keep an unknown address.
const MAX_WINDOW_BYTES: u64 = 256 << 20;
/// Longest string read for a report (assertion messages, file and function names).
const MAX_STRING: usize = 4096;

/// An initialized `.global`/`.const` variable placed in the data window.
#[derive(Debug, Clone)]
pub(crate) struct DataVar {
    /// The variable's name as the PTX declares it.
    pub name: String,
    /// Byte offset in the data window.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Initial contents; `None` when the initializer could not be evaluated (an expression
    /// weft does not fold), in which case loads from the variable are unknown.
    pub bytes: Option<Box<[u8]>>,
}

/// The initialized module variables, sorted by offset.
#[derive(Debug, Clone, Default)]
pub(crate) struct DataLayout {
    pub vars: Vec<DataVar>,
}

impl DataLayout {
    /// Places every initialized `.global`/`.const` module variable and evaluates its
    /// initializer. `base` is the data window's address (generic and global alike).
    pub fn new(module: &Module<'_>, base: u64) -> (DataLayout, FxHashMap<String, u32>) {
        let mut index: FxHashMap<String, u32> = FxHashMap::default();
        let mut placed: Vec<(&VarDecl<'_>, u32, u32)> = Vec::new();
        let mut offset: u64 = 0;
        for v in &module.globals {
            if !matches!(v.space, StateSpace::Global | StateSpace::Const) || v.init.is_none() {
                continue;
            }
            let Some(size) = v.size_bytes() else { continue };
            let align = u64::from(v.align.unwrap_or(0))
                .max(v.element_size().unwrap_or(1))
                .clamp(1, 4096);
            let start = offset.div_ceil(align) * align;
            let end = start + size.max(1);
            if end > MAX_WINDOW_BYTES {
                break;
            }
            // Fits in u32: bounded by MAX_WINDOW_BYTES.
            index.insert(v.name.to_string(), placed.len() as u32);
            placed.push((v, start as u32, size as u32));
            offset = end;
        }
        let addr_of = |name: &str| -> Option<u64> {
            let &i = index.get(name)?;
            placed
                .get(i as usize)
                .map(|&(_, off, _)| base + u64::from(off))
        };
        let vars = placed
            .iter()
            .map(|&(v, off, size)| DataVar {
                name: v.name.to_string(),
                offset: off,
                size,
                bytes: if u64::from(size) <= MAX_VAR_BYTES {
                    evaluate(v, &addr_of).map(Vec::into_boxed_slice)
                } else {
                    None
                },
            })
            .collect();
        (DataLayout { vars }, index)
    }

    /// The variable containing data-window offset `off`, with its index.
    pub fn find(&self, off: u64) -> Option<(usize, &DataVar)> {
        let k = self
            .vars
            .partition_point(|v| u64::from(v.offset) <= off)
            .checked_sub(1)?;
        let v = self.vars.get(k)?;
        (off < u64::from(v.offset) + u64::from(v.size)).then_some((k, v))
    }

    /// The NUL-terminated string at data-window offset `off`, if its bytes are known.
    pub fn string(&self, off: u64) -> Option<String> {
        let (_, v) = self.find(off)?;
        let bytes = v.bytes.as_deref()?;
        let start = usize::try_from(off - u64::from(v.offset)).ok()?;
        let tail = bytes.get(start..)?;
        let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        let s = tail.get(..len.min(MAX_STRING))?;
        Some(String::from_utf8_lossy(s).into_owned())
    }
}

/// The bytes of `v`'s initializer, zero-filled to its size; `None` when an element is not a
/// constant weft folds (or the list is longer than the variable).
fn evaluate(v: &VarDecl<'_>, addr_of: &dyn Fn(&str) -> Option<u64>) -> Option<Vec<u8>> {
    let size = usize::try_from(v.size_bytes()?).ok()?;
    let scalar = usize::try_from(ptx_parser::ast::scalar_type_size(v.ty)?).ok()?;
    let float = v.ty.starts_with('f');
    let mut leaves = Vec::new();
    flatten(v.init.as_ref()?, &mut leaves, 0)?;
    let mut out = Vec::with_capacity(size);
    for e in leaves {
        let value = match (float, e) {
            (true, Expr::Int(i)) if scalar == 4 => u64::from((*i as f32).to_bits()),
            (true, Expr::Int(i)) if scalar == 8 => (*i as f64).to_bits(),
            (true, Expr::F32(b)) if scalar == 8 => f64::from(f32::from_bits(*b)).to_bits(),
            (true, Expr::F64(b)) if scalar == 4 => u64::from((f64::from_bits(*b) as f32).to_bits()),
            _ => fold(e, addr_of, 0)?,
        };
        out.extend_from_slice(value.to_le_bytes().get(..scalar.min(8))?);
        if scalar > 8 {
            out.resize(out.len() + scalar - 8, 0);
        }
        if out.len() > size {
            return None;
        }
    }
    out.resize(size, 0);
    Some(out)
}

/// Initializer leaves in order (nested lists of multi-dimensional arrays flattened).
fn flatten<'i, 's>(
    init: &'i Initializer<'s>,
    out: &mut Vec<&'i Expr<'s>>,
    depth: u32,
) -> Option<()> {
    if depth > 64 {
        return None;
    }
    match init {
        Initializer::Expr(e) => out.push(e),
        Initializer::List(items) => {
            for item in items {
                flatten(item, out, depth + 1)?;
            }
        }
        Initializer::Field { .. } => return None,
    }
    Some(())
}

/// A constant integer expression; symbols are the addresses of initialized variables.
fn fold(e: &Expr<'_>, addr_of: &dyn Fn(&str) -> Option<u64>, depth: u32) -> Option<u64> {
    if depth > 64 {
        return None;
    }
    let d = depth + 1;
    Some(match e {
        Expr::Int(i) => *i as u64,
        Expr::F32(b) => u64::from(*b),
        Expr::F64(b) => *b,
        Expr::Symbol(name) => addr_of(name)?,
        // `generic(sym)`: global addresses are generic addresses here.
        Expr::Call(_, inner) => fold(inner, addr_of, d)?,
        Expr::Unary(op, x) => {
            let x = fold(x, addr_of, d)?;
            match op {
                UnaryOp::Neg => x.wrapping_neg(),
                UnaryOp::Not => !x,
                UnaryOp::LogicalNot => u64::from(x == 0),
            }
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (fold(a, addr_of, d)?, fold(b, addr_of, d)?);
            match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Div => a.checked_div(b)?,
                BinaryOp::Rem => a.checked_rem(b)?,
                BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                BinaryOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                BinaryOp::And => a & b,
                BinaryOp::Or => a | b,
                BinaryOp::Xor => a ^ b,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(src: &str) -> DataLayout {
        let m = ptx_parser::parse(src).expect("parses");
        DataLayout::new(&m, 0x1000).0
    }

    #[test]
    fn short_lists_are_zero_filled_and_strings_end_at_nul() {
        let d = layout(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .global .align 4 .b8 t[16] = {3, 0, 0, 0, 2};\n\
             .global .align 1 .b8 $str[4] = {104, 105};\n",
        );
        assert_eq!(d.vars.len(), 2);
        assert_eq!(
            d.vars[0].bytes.as_deref(),
            Some(&[3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..])
        );
        assert_eq!(d.string(u64::from(d.vars[1].offset)).as_deref(), Some("hi"));
        assert_eq!(d.find(3).map(|(k, _)| k), Some(0));
        assert_eq!(d.find(16).map(|(k, _)| k), Some(1));
        assert!(d.find(20).is_none());
    }

    #[test]
    fn typed_elements_symbols_and_unfoldable_initializers() {
        let d = layout(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .const .align 4 .u32 c[2] = {1, -1};\n\
             .global .align 8 .u64 p[1] = {generic(c)};\n\
             .global .align 4 .f32 f = 1.5;\n",
        );
        assert_eq!(
            d.vars[0].bytes.as_deref(),
            Some(&[1, 0, 0, 0, 255, 255, 255, 255][..])
        );
        let p = d.vars[1].bytes.as_deref().expect("folded");
        assert_eq!(u64::from_le_bytes(p.try_into().expect("8 bytes")), 0x1000);
        let f = d.vars[2].bytes.as_deref().expect("folded");
        assert_eq!(f32::from_le_bytes(f.try_into().expect("4 bytes")), 1.5);
    }
}
