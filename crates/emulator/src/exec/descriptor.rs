//! Shared-memory matrix descriptors of the tensor-core instructions, and the bytes an operand
//! described by one occupies.
//!
//! `wgmma.mma_async` (PTX ISA: *Asynchronous Warpgroup Level Matrix Shared Memory Layout*,
//! *Matrix Descriptor Format*) and `tcgen05.mma` (*Shared Memory Descriptor*) read their shared
//! operands through a 64-bit descriptor: the start address (bits 0–13), the leading
//! dimension byte offset (LBO, bits 16–29) and the stride dimension byte offset (SBO, bits
//! 32–45), each stored without its 4 low bits; a base offset (bits 49–51); and the swizzling
//! mode (wgmma: bits 62–63, 0 none, 1 128-byte, 2 64-byte, 3 32-byte; tcgen05: bits 61–63,
//! 0 none, 1 128-byte with 32-byte atoms, 2 128-byte, 4 64-byte, 6 32-byte, and bit 52 the
//! absolute leading-dimension address mode).
//!
//! The layouts are described in 16-byte units (the ISA's "128-bit normalized" elements). An
//! operand has `mn` rows in the M or N dimension and `k_bytes` bytes of K per row.
//!
//! - **K-major** (the ISA's non-transposed A and B): 8-row groups `SBO` apart. Without
//!   swizzling, a group's core matrix is 8 rows of 16 bytes, and the 16-byte columns of K are
//!   `LBO` apart; swizzled with a `W`-byte mode, the rows of a group are `W` bytes apart and
//!   the columns of K adjacent (LBO unused).
//! - **MN-major** (transposed, 16-bit types only): 16-byte units of MN and rows of K.
//!   Without swizzling, each unit of MN is a core matrix of 8 K-rows of 16 bytes, units
//!   `SBO` apart and 8-row groups of K `LBO` apart; swizzled with a `W`-byte mode, `W / 16`
//!   units of MN are adjacent with the next such atom `LBO` away, and the K-rows are `W`
//!   bytes apart with 8-row groups `SBO` apart.
//!
//! The swizzle then permutes the 16-byte units inside each aligned `W`-byte row segment:
//! address bits `[4, 4 + log2(W/16))` are XORed with bits `[7, 7 + log2(W/16))` (the
//! pattern repeats every 8 segments: 1024, 512 or 256 bytes). With a base offset of 0 the
//! pattern starts at such a boundary, and the units read are computed exactly. Otherwise
//! (and for tcgen05's 128-byte mode with 32-byte atoms) the whole aligned `W`-byte segment
//! holding each unit is taken: the swizzle only moves a unit within its segment, so that is
//! an upper bound, flagged as one.

/// The swizzling mode of a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Swizzle {
    None,
    /// A `W`-byte swizzle (32, 64 or 128).
    Bytes(u32),
    /// tcgen05's 128-byte swizzle with 32-byte atomicity: bounded by its 128-byte segments.
    Bytes128Atom32,
}

/// A decoded shared-memory matrix descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SmemDesc {
    /// Start address in the CTA's shared window.
    pub start: u32,
    /// Leading dimension byte offset.
    pub lbo: u32,
    /// Stride dimension byte offset.
    pub sbo: u32,
    pub base_offset: u8,
    pub swizzle: Swizzle,
}

/// Why a descriptor or an operand shape cannot be laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayoutError {
    /// A reserved swizzle encoding (tcgen05 modes 3, 5, 7).
    InvalidSwizzle(u8),
    /// tcgen05's absolute leading-dimension address mode (bit 52), not modelled.
    AbsoluteLeadingDimension,
    /// An operand shape the layouts above do not cover (K wider than the swizzle row, or
    /// MN not a whole number of 16-byte units).
    Shape,
}

fn field(d: u64, lo: u32) -> u32 {
    (((d >> lo) & 0x3fff) as u32) << 4
}

/// Decodes a `wgmma.mma_async` matrix descriptor.
pub(crate) fn decode_wgmma(d: u64) -> SmemDesc {
    SmemDesc {
        start: field(d, 0),
        lbo: field(d, 16),
        sbo: field(d, 32),
        base_offset: ((d >> 49) & 7) as u8,
        swizzle: match d >> 62 {
            0 => Swizzle::None,
            1 => Swizzle::Bytes(128),
            2 => Swizzle::Bytes(64),
            _ => Swizzle::Bytes(32),
        },
    }
}

/// Decodes a `tcgen05` shared-memory descriptor.
pub(crate) fn decode_tcgen05(d: u64) -> Result<SmemDesc, LayoutError> {
    if (d >> 52) & 1 == 1 {
        return Err(LayoutError::AbsoluteLeadingDimension);
    }
    let mode = (d >> 61) as u8;
    let swizzle = match mode {
        0 => Swizzle::None,
        1 => Swizzle::Bytes128Atom32,
        2 => Swizzle::Bytes(128),
        4 => Swizzle::Bytes(64),
        6 => Swizzle::Bytes(32),
        m => return Err(LayoutError::InvalidSwizzle(m)),
    };
    Ok(SmemDesc {
        start: field(d, 0),
        lbo: field(d, 16),
        sbo: field(d, 32),
        base_offset: ((d >> 49) & 7) as u8,
        swizzle,
    })
}

/// The shape of one operand as the instruction reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OperandShape {
    /// Rows in the M or N dimension.
    pub mn: u32,
    /// Bytes of K per row (32 for every dense shape: K × element bits / 8).
    pub k_bytes: u32,
    /// Bits per element.
    pub elem_bits: u32,
    /// MN-major (transposed) rather than K-major.
    pub mn_major: bool,
}

/// The operand's bytes: sorted, disjoint `(start, len)` runs, and whether they are exact
/// (else an upper bound: a base offset, or tcgen05's 32-byte-atom swizzle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub runs: Vec<(u32, u32)>,
    pub exact: bool,
}

/// The bytes of shared memory the operand `shape` described by `desc` occupies.
pub(crate) fn footprint(desc: &SmemDesc, shape: &OperandShape) -> Result<Footprint, LayoutError> {
    let w = match desc.swizzle {
        Swizzle::None => 0,
        Swizzle::Bytes(w) => w,
        Swizzle::Bytes128Atom32 => 128,
    };
    let exact = desc.swizzle == Swizzle::None
        || (matches!(desc.swizzle, Swizzle::Bytes(_)) && desc.base_offset == 0);
    // Unit offsets from the start, before the swizzle.
    let mut offsets: Vec<u64> = Vec::new();
    let (lbo, sbo) = (u64::from(desc.lbo), u64::from(desc.sbo));
    if !shape.mn_major {
        let k_units = shape.k_bytes.div_ceil(16);
        if w != 0 && shape.k_bytes > w {
            return Err(LayoutError::Shape);
        }
        for r in 0..u64::from(shape.mn) {
            for u in 0..u64::from(k_units) {
                offsets.push(if w == 0 {
                    (r / 8) * sbo + (r % 8) * 16 + u * lbo
                } else {
                    (r / 8) * sbo + (r % 8) * u64::from(w) + u * 16
                });
            }
        }
    } else {
        if shape.elem_bits == 0 || (shape.mn * shape.elem_bits) % 128 != 0 {
            return Err(LayoutError::Shape);
        }
        let mn_units = u64::from(shape.mn * shape.elem_bits / 128);
        let k_rows = u64::from(shape.k_bytes * 8 / shape.elem_bits);
        let wu = u64::from(w / 16);
        for m in 0..mn_units {
            for k in 0..k_rows {
                offsets.push(if w == 0 {
                    m * sbo + (k % 8) * 16 + (k / 8) * lbo
                } else {
                    (m % wu) * 16 + (m / wu) * lbo + (k % 8) * u64::from(w) + (k / 8) * sbo
                });
            }
        }
    }
    let mut units: Vec<u64> = offsets
        .into_iter()
        .map(|o| {
            let a = u64::from(desc.start) + o;
            match (w, exact) {
                (0, _) => a,
                (w, true) => {
                    let mask = u64::from(w / 16 - 1);
                    a ^ (((a >> 7) & mask) << 4)
                }
                // The segment's first unit; the whole segment is taken below.
                (w, false) => a - a % u64::from(w),
            }
        })
        .collect();
    units.sort_unstable();
    units.dedup();
    let unit_len = if exact { 16 } else { u64::from(w) };
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for a in units {
        let a32 = u32::try_from(a).unwrap_or(u32::MAX);
        let len = unit_len as u32;
        match runs.last_mut() {
            Some((s, l)) if u64::from(*s) + u64::from(*l) >= a => {
                let end = (a + unit_len).max(u64::from(*s) + u64::from(*l));
                *l = u32::try_from(end - u64::from(*s)).unwrap_or(u32::MAX);
            }
            _ => runs.push((a32, len)),
        }
    }
    Ok(Footprint { runs, exact })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wgmma_desc(start: u32, lbo: u32, sbo: u32, mode: u64) -> u64 {
        u64::from(start >> 4)
            | (u64::from(lbo >> 4) << 16)
            | (u64::from(sbo >> 4) << 32)
            | (mode << 62)
    }

    fn k_major(mn: u32) -> OperandShape {
        OperandShape {
            mn,
            k_bytes: 32,
            elem_bits: 16,
            mn_major: false,
        }
    }

    #[test]
    fn fields_decode() {
        let d = decode_wgmma(wgmma_desc(0x400, 0x10, 0x400, 1) | (3 << 49));
        assert_eq!(d.start, 0x400);
        assert_eq!(d.lbo, 0x10);
        assert_eq!(d.sbo, 0x400);
        assert_eq!(d.base_offset, 3);
        assert_eq!(d.swizzle, Swizzle::Bytes(128));
        assert_eq!(decode_wgmma(2 << 62).swizzle, Swizzle::Bytes(64));
        assert_eq!(decode_wgmma(3 << 62).swizzle, Swizzle::Bytes(32));
        let t = decode_tcgen05((2 << 61) | (1 << 46) | 0x40).unwrap();
        assert_eq!((t.start, t.swizzle), (0x400, Swizzle::Bytes(128)));
        assert_eq!(decode_tcgen05(4 << 61).unwrap().swizzle, Swizzle::Bytes(64));
        assert_eq!(decode_tcgen05(6 << 61).unwrap().swizzle, Swizzle::Bytes(32));
        assert_eq!(decode_tcgen05(3 << 61), Err(LayoutError::InvalidSwizzle(3)));
        assert_eq!(
            decode_tcgen05(1 << 52),
            Err(LayoutError::AbsoluteLeadingDimension)
        );
    }

    #[test]
    fn k_major_interleaved_core_matrices() {
        // 16 rows, two K columns 128 bytes apart, 8-row groups 256 bytes apart: contiguous.
        let d = decode_wgmma(wgmma_desc(0x1000, 128, 256, 0));
        let f = footprint(&d, &k_major(16)).unwrap();
        assert_eq!(
            f,
            Footprint {
                runs: vec![(0x1000, 512)],
                exact: true
            }
        );
        // K columns 1024 bytes apart: two blocks of 8 rows x 16 bytes per group.
        let d = decode_wgmma(wgmma_desc(0, 1024, 128, 0));
        let f = footprint(&d, &k_major(16)).unwrap();
        assert_eq!(f.runs, vec![(0, 256), (1024, 256)]);
    }

    #[test]
    fn k_major_128b_swizzle_reads_two_units_per_row() {
        // A 64-row tile with 128-byte rows (64 halves of K), 8-row groups 1024 bytes apart;
        // the k-slice at byte 32 of each row (the second wgmma of four).
        let d = decode_wgmma(wgmma_desc(0x2000 + 32, 16, 1024, 1));
        let f = footprint(&d, &k_major(64)).unwrap();
        assert!(f.exact);
        assert_eq!(f.runs.len(), 64, "one 32-byte run per row");
        let total: u32 = f.runs.iter().map(|r| r.1).sum();
        assert_eq!(total, 64 * 32);
        // Row 0: units 2, 3 unswizzled. Row 1: units (2,3) ^ 1 = (3,2). Row 2: (0,1).
        assert_eq!(f.runs[0], (0x2000 + 32, 32));
        assert_eq!(f.runs[1], (0x2000 + 128 + 32, 32));
        assert_eq!(f.runs[2], (0x2000 + 256, 32));
        // Every run stays inside its 128-byte row.
        for (s, l) in &f.runs {
            assert_eq!(s / 128, (s + l - 1) / 128);
        }
        // The four k-slices together cover the whole 8 KiB tile exactly once.
        let mut all: Vec<(u32, u32)> = (0..4)
            .flat_map(|j| {
                let d = decode_wgmma(wgmma_desc(0x2000 + 32 * j, 16, 1024, 1));
                footprint(&d, &k_major(64)).unwrap().runs
            })
            .collect();
        all.sort_unstable();
        let total: u32 = all.iter().map(|r| r.1).sum();
        assert_eq!(total, 8192);
        assert_eq!(all.first().unwrap().0, 0x2000);
        for pair in all.windows(2) {
            assert_eq!(pair[0].0 + pair[0].1, pair[1].0, "no overlap, no gap");
        }
    }

    #[test]
    fn smaller_swizzles_permute_within_their_segment() {
        for (mode, w) in [(2u64, 64u32), (3, 32)] {
            let d = decode_wgmma(wgmma_desc(0x800, 16, 8 * w, mode));
            let f = footprint(&d, &k_major(8)).unwrap();
            assert!(f.exact);
            // K is 32 bytes of each W-byte row: with W = 32 the whole tile.
            let total: u32 = f.runs.iter().map(|r| r.1).sum();
            assert_eq!(total, 8 * 32);
            for (s, l) in &f.runs {
                assert!(*s >= 0x800 && s + l <= 0x800 + 8 * w);
            }
        }
    }

    #[test]
    fn base_offset_takes_whole_segments() {
        let d = decode_wgmma(wgmma_desc(0x2000 + 32, 16, 1024, 1) | (1 << 49));
        let f = footprint(&d, &k_major(8)).unwrap();
        assert!(!f.exact);
        assert_eq!(f.runs, vec![(0x2000, 1024)]);
    }

    #[test]
    fn mn_major_layouts() {
        // B of m64n64k16, N-major, 128-byte swizzle: 64 halves of N = 8 units (one atom
        // wide), 16 K-rows: two 1 KiB atoms SBO apart.
        let shape = OperandShape {
            mn: 64,
            k_bytes: 32,
            elem_bits: 16,
            mn_major: true,
        };
        let d = decode_wgmma(wgmma_desc(0x4000, 0, 1024, 1));
        let f = footprint(&d, &shape).unwrap();
        assert_eq!(f.runs, vec![(0x4000, 2048)]);
        // N = 128: two atoms along N, LBO = 2048 apart.
        let wide = OperandShape { mn: 128, ..shape };
        let d = decode_wgmma(wgmma_desc(0x4000, 2048, 1024, 1));
        assert_eq!(footprint(&d, &wide).unwrap().runs, vec![(0x4000, 4096)]);
        // Interleaved: units of N SBO apart, 8-row K groups LBO apart.
        let d = decode_wgmma(wgmma_desc(0, 128, 512, 0));
        let narrow = OperandShape { mn: 16, ..shape };
        let f = footprint(&d, &narrow).unwrap();
        assert_eq!(f.runs, vec![(0, 256), (512, 256)]);
    }

    #[test]
    fn shapes_outside_the_layouts_are_errors() {
        let d = decode_wgmma(wgmma_desc(0, 16, 256, 3));
        let wide_k = OperandShape {
            k_bytes: 64,
            ..k_major(8)
        };
        assert_eq!(footprint(&d, &wide_k), Err(LayoutError::Shape));
        let odd = OperandShape {
            mn: 4,
            k_bytes: 32,
            elem_bits: 16,
            mn_major: true,
        };
        assert_eq!(footprint(&d, &odd), Err(LayoutError::Shape));
    }
}
