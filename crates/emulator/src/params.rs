//! Kernel-parameter values fixed from outside (the cli's `--param`): the one model of a
//! binding ([`ParamBinding`]: which parameter, which field, which value) and its resolution
//! against a kernel's declaration into bytes ([`resolve_params`]). The cli parses the text
//! into bindings; the emulator resolves them. Errors are data ([`ParamError`]); the cli words
//! them.

use ptx_parser::{
    Function,
    ast::{Linkage, StateSpace, Statement, VarDecl, scalar_type_size},
};

/// The name of the variable that stands for cluster launch control's answers (PTX ISA:
/// *clusterlaunchcontrol.try_cancel*): how many of the CTA's cancellation requests succeed
/// before the first that fails. A kernel that queries such answers gets it as one more
/// `.u32` parameter after its own (not a PTX identifier: it names nothing the kernel
/// declares), so the exploration of sizes explores it and `--param` can fix it.
pub const CLC_VARIABLE: &str = "clusterlaunchcontrol.canceled";

/// Whether `function` queries cluster launch control's answers
/// (`clusterlaunchcontrol.query_cancel`).
fn queries_clc(function: &Function<'_>) -> bool {
    fn block(statements: &[Statement<'_>]) -> bool {
        statements.iter().any(|s| match s {
            Statement::Instruction(i) => {
                i.opcode == "clusterlaunchcontrol" && i.modifiers.starts_with("query_cancel")
            }
            Statement::Block(b) => block(&b.statements),
            _ => false,
        })
    }
    function.body.as_ref().is_some_and(|b| block(&b.statements))
}

/// The parameters of `function` as weft lays them out: its declared ones, then
/// [`CLC_VARIABLE`] when it queries cluster launch control.
pub fn kernel_params<'a>(function: &Function<'a>) -> Vec<VarDecl<'a>> {
    let mut params = function.params.clone();
    if queries_clc(function) {
        params.push(VarDecl {
            linkage: Linkage::None,
            space: StateSpace::Param,
            space_qualifier: None,
            align: Some(4),
            vector: None,
            ty: "u32",
            ptr: None,
            name: CLC_VARIABLE,
            range: None,
            dims: Vec::new(),
            init: None,
            line: function.line,
        });
    }
    params
}

/// Which kernel parameter a [`ParamBinding`] fixes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ParamRef {
    /// By 0-based position.
    Index(u32),
    /// By name as the PTX declares it.
    Name(String),
}

/// The scalar type of a field of a by-value struct parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// Unsigned (or untyped bits) integer of the given bytes.
    Unsigned(u8),
    /// Signed integer of the given bytes.
    Signed(u8),
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
}

impl ScalarType {
    /// Size in bytes.
    pub fn size(self) -> u8 {
        match self {
            ScalarType::Unsigned(n) | ScalarType::Signed(n) => n,
            ScalarType::F32 => 4,
            ScalarType::F64 => 8,
        }
    }

    fn float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }
}

/// A value before it is given the type of what it fixes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    /// An integer.
    Int(i128),
    /// A floating-point number.
    Float(f64),
    /// An integer field left to exploration within `lo..=hi` (a precondition of the
    /// kernel, e.g. `K >= 1`): no bytes are fixed; the exploration's choices allow these
    /// values only (`docs/semantics.md` §6.5).
    Range {
        /// The smallest value.
        lo: i128,
        /// The largest value.
        hi: i128,
    },
}

/// A kernel parameter (or a scalar field of a by-value struct parameter) fixed to a value.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamBinding {
    /// The parameter.
    pub target: ParamRef,
    /// For a field of a by-value struct: its byte offset and type.
    pub field: Option<(u64, ScalarType)>,
    /// The value.
    pub value: ParamValue,
}

/// A binding resolved against one kernel: bytes at an offset of a parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedParam {
    /// The binding's position in the slice given to [`resolve_params`].
    pub binding: usize,
    /// The parameter's index.
    pub index: usize,
    /// Byte offset inside the parameter.
    pub offset: u64,
    /// Little-endian value bytes (none for a range).
    pub bytes: Vec<u8>,
    /// For a [`ParamValue::Range`]: the field's size in bytes and its allowed values, as
    /// unsigned bit patterns of that size.
    pub range: Option<(u8, u64, u64)>,
}

impl ResolvedParam {
    /// One past the last byte the binding covers.
    pub fn end(&self) -> u64 {
        let len = match self.range {
            Some((size, _, _)) => u64::from(size),
            None => self.bytes.len() as u64,
        };
        self.offset.saturating_add(len)
    }
}

/// Why a binding does not fit the kernel. `binding` fields index the slice given to
/// [`resolve_params`]; `param` is the parameter's index and `name` its declared name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A binding without a field names an aggregate parameter.
    #[error("parameter {param} (`{name}`) is an aggregate; a binding must name a field")]
    Aggregate {
        /// The binding.
        binding: usize,
        /// The parameter.
        param: usize,
        /// Its name.
        name: String,
        /// Its size in bytes, when known.
        size: Option<u64>,
    },
    /// The bytes a binding sets lie outside the parameter.
    #[error("bytes {start}..{end} lie outside parameter {param} (`{name}`, {size} bytes)")]
    OutOfRange {
        /// The binding.
        binding: usize,
        /// The parameter.
        param: usize,
        /// Its name.
        name: String,
        /// First byte set.
        start: u64,
        /// One past the last byte set.
        end: u64,
        /// The parameter's size in bytes.
        size: u64,
    },
    /// A float value for an integer parameter or field.
    #[error("a {size}-byte integer parameter needs an integer")]
    NeedsInteger {
        /// The binding.
        binding: usize,
        /// The integer's size in bytes.
        size: u8,
    },
    /// An integer that does not fit its parameter or field.
    #[error("{value} does not fit in {size} bytes")]
    DoesNotFit {
        /// The binding.
        binding: usize,
        /// The value.
        value: i128,
        /// The size in bytes.
        size: u8,
    },
    /// A range that is empty, negative, beyond its field's values or on a float field.
    #[error("the range {lo}..={hi} is not within 0..={max} for a {size}-byte integer field")]
    BadRange {
        /// The binding.
        binding: usize,
        /// Its smallest value.
        lo: i128,
        /// Its largest value.
        hi: i128,
        /// The largest value the field holds (0 for a float field).
        max: i128,
        /// The field's size in bytes.
        size: u8,
    },
    /// Two bindings set the same bytes.
    #[error("two bindings both set bytes {start}..{end} of parameter {param} (`{name}`)")]
    Overlap {
        /// The earlier binding.
        first: usize,
        /// The later binding.
        second: usize,
        /// The parameter.
        param: usize,
        /// Its name.
        name: String,
        /// First common byte.
        start: u64,
        /// One past the last common byte.
        end: u64,
    },
}

/// Resolves the `bindings` that name a parameter of `function`; `used[k]` is set for each
/// binding `k` that does (a binding naming no parameter of this kernel does not apply).
pub fn resolve_params(
    function: &Function<'_>,
    bindings: &[ParamBinding],
    used: &mut [bool],
) -> Result<Vec<ResolvedParam>, ParamError> {
    let mut out: Vec<ResolvedParam> = Vec::new();
    let params = kernel_params(function);
    for (k, (b, used)) in bindings.iter().zip(used).enumerate() {
        let index = match &b.target {
            ParamRef::Index(i) => Some(*i as usize).filter(|&i| i < params.len()),
            ParamRef::Name(name) => params.iter().position(|p| p.name == name),
        };
        let Some(index) = index else { continue };
        *used = true;
        let decl = &params[index];
        let total = decl.size_bytes();
        let (offset, size, float) = match b.field {
            Some((offset, ty)) => (offset, ty.size(), ty.float()),
            None => match (scalar_type_size(decl.ty), decl.dims.is_empty(), decl.vector) {
                (Some(size), true, None) => (0, size as u8, decl.ty.starts_with('f')),
                _ => {
                    return Err(ParamError::Aggregate {
                        binding: k,
                        param: index,
                        name: decl.name.to_string(),
                        size: total,
                    });
                }
            },
        };
        let end = offset.saturating_add(u64::from(size));
        if let Some(total) = total.filter(|&total| end > total) {
            return Err(ParamError::OutOfRange {
                binding: k,
                param: index,
                name: decl.name.to_string(),
                start: offset,
                end,
                size: total,
            });
        }
        let range = match b.value {
            ParamValue::Range { lo, hi } => {
                let signed = matches!(b.field, Some((_, ScalarType::Signed(_))))
                    || (b.field.is_none() && decl.ty.starts_with('s'));
                let bits = u32::from(size) * 8 - u32::from(signed);
                let max = if float { 0 } else { (1i128 << bits) - 1 };
                // `LO..` (the cli's open end) reaches the field's largest value.
                let hi = if hi == i128::MAX { max } else { hi };
                if float || lo < 0 || lo > hi || hi > max {
                    return Err(ParamError::BadRange {
                        binding: k,
                        lo,
                        hi,
                        max,
                        size,
                    });
                }
                Some((size, lo as u64, hi as u64))
            }
            _ => None,
        };
        let bytes = if range.is_some() {
            Vec::new()
        } else {
            value_bytes(b.value, size, float, k)?
        };
        if let Some(earlier) = out
            .iter()
            .find(|p| p.index == index && p.offset < end && offset < p.end())
        {
            return Err(ParamError::Overlap {
                first: earlier.binding,
                second: k,
                param: index,
                name: decl.name.to_string(),
                start: offset.max(earlier.offset),
                end: end.min(earlier.end()),
            });
        }
        out.push(ResolvedParam {
            binding: k,
            index,
            offset,
            bytes,
            range,
        });
    }
    Ok(out)
}

/// The value's bytes (little-endian) for a scalar of `size` bytes.
fn value_bytes(
    value: ParamValue,
    size: u8,
    float: bool,
    binding: usize,
) -> Result<Vec<u8>, ParamError> {
    Ok(match (value, float, size) {
        (ParamValue::Float(v), true, 4) => (v as f32).to_le_bytes().to_vec(),
        (ParamValue::Float(v), true, 8) => v.to_le_bytes().to_vec(),
        (ParamValue::Int(v), true, 4) => (v as f32).to_le_bytes().to_vec(),
        (ParamValue::Int(v), true, 8) => (v as f64).to_le_bytes().to_vec(),
        (ParamValue::Float(_), _, _) => return Err(ParamError::NeedsInteger { binding, size }),
        (ParamValue::Range { .. }, _, _) => Vec::new(),
        (ParamValue::Int(v), _, n) => {
            let bits = u32::from(n) * 8;
            let fits = bits >= 128 || {
                let min = -(1i128 << (bits - 1));
                let max = (1i128 << bits) - 1;
                (min..=max).contains(&v)
            };
            if !fits {
                return Err(ParamError::DoesNotFit {
                    binding,
                    value: v,
                    size: n,
                });
            }
            v.to_le_bytes()[..usize::from(n)].to_vec()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(target: ParamRef, field: Option<(u64, ScalarType)>, value: ParamValue) -> ParamBinding {
        ParamBinding {
            target,
            field,
            value,
        }
    }

    #[test]
    fn ranges_resolve_to_a_field_and_its_values() {
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 n, .param .align 8 .b8 s[16], .param .f32 x)\n{\nret;\n}\n";
        let module = ptx_parser::parse(src).expect("parses");
        let k = module.entries().next().expect("a kernel");
        let resolve = |bs: &[ParamBinding]| {
            let mut used = vec![false; bs.len()];
            resolve_params(k, bs, &mut used)
        };
        let range = |lo, hi| ParamValue::Range { lo, hi };
        let r = resolve(&[
            bind(ParamRef::Index(0), None, range(1, i128::MAX)),
            bind(
                ParamRef::Index(1),
                Some((8, ScalarType::Signed(4))),
                range(1, i128::MAX),
            ),
            bind(
                ParamRef::Index(1),
                Some((12, ScalarType::Unsigned(2))),
                range(3, 3),
            ),
        ])
        .expect("fits");
        // The open end is the field's largest value (signed: the largest positive one).
        assert_eq!(r[0].range, Some((4, 1, u64::from(u32::MAX))));
        assert_eq!(r[1].range, Some((4, 1, i32::MAX as u64)));
        assert_eq!(
            (r[2].offset, r[2].end(), r[2].range),
            (12, 14, Some((2, 3, 3)))
        );
        assert!(r.iter().all(|p| p.bytes.is_empty()));
        let bad = |b: ParamBinding| matches!(resolve(&[b]), Err(ParamError::BadRange { .. }));
        assert!(bad(bind(ParamRef::Index(0), None, range(-1, 4))));
        assert!(bad(bind(ParamRef::Index(0), None, range(5, 4))));
        assert!(bad(bind(ParamRef::Index(0), None, range(0, 1 << 32))));
        assert!(bad(bind(ParamRef::Index(2), None, range(0, 4))));
        // A range overlapping a pin of the same bytes is two bindings of those bytes.
        assert!(matches!(
            resolve(&[
                bind(ParamRef::Index(0), None, range(1, 8)),
                bind(ParamRef::Index(0), None, ParamValue::Int(2)),
            ]),
            Err(ParamError::Overlap { .. })
        ));
    }

    #[test]
    fn bindings_resolve_to_bytes_against_the_declaration() {
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u16 h, .param .f32 x, .param .align 8 .b8 s[16])\n{\nret;\n}\n";
        let module = ptx_parser::parse(src).expect("parses");
        let k = module.entries().next().expect("a kernel");
        let resolve = |bs: &[ParamBinding]| {
            let mut used = vec![false; bs.len()];
            resolve_params(k, bs, &mut used).map(|r| (r, used))
        };
        let (r, used) = resolve(&[
            bind(ParamRef::Index(0), None, ParamValue::Int(-1)),
            bind(ParamRef::Name("x".into()), None, ParamValue::Float(1.5)),
            bind(
                ParamRef::Index(2),
                Some((12, ScalarType::Unsigned(4))),
                ParamValue::Int(16),
            ),
            bind(ParamRef::Index(7), None, ParamValue::Int(1)),
        ])
        .expect("fits");
        assert_eq!(used, [true, true, true, false]);
        assert_eq!(r[0].bytes, [0xff, 0xff]);
        assert_eq!(r[1].bytes, 1.5f32.to_le_bytes());
        assert_eq!(
            (r[2].index, r[2].offset, &r[2].bytes[..]),
            (2, 12, &[16, 0, 0, 0][..])
        );

        let err = |bs: &[ParamBinding]| resolve(bs).err();
        assert!(matches!(
            err(&[bind(ParamRef::Index(0), None, ParamValue::Int(70000))]),
            Some(ParamError::DoesNotFit { size: 2, .. })
        ));
        assert!(matches!(
            err(&[bind(ParamRef::Index(0), None, ParamValue::Float(1.5))]),
            Some(ParamError::NeedsInteger { .. })
        ));
        assert!(matches!(
            err(&[bind(ParamRef::Index(2), None, ParamValue::Int(1))]),
            Some(ParamError::Aggregate { size: Some(16), .. })
        ));
        assert!(matches!(
            err(&[bind(
                ParamRef::Index(2),
                Some((14, ScalarType::Unsigned(4))),
                ParamValue::Int(1)
            )]),
            Some(ParamError::OutOfRange {
                start: 14,
                end: 18,
                ..
            })
        ));
        let field = |at| {
            bind(
                ParamRef::Index(2),
                Some((at, ScalarType::Unsigned(4))),
                ParamValue::Int(1),
            )
        };
        assert!(matches!(
            err(&[field(0), field(2)]),
            Some(ParamError::Overlap {
                first: 0,
                second: 1,
                start: 2,
                end: 4,
                ..
            })
        ));
    }
}
