//! Where each name lives: the shared-memory layout, module and function scopes, variable
//! declarations and lookups, and the lowering of operands.

use crate::ir::decode::parse_sreg;
use crate::ir::lower::{Lowerer, Scope, VarLoc, collect_callees, collect_shared, err};
use crate::ir::{DataLayout, KernelParam, MemBase, Opnd, RegId};
use crate::params::{ParamError, resolve_params};
use crate::{Config, Error, SharedSymbol};
use ptx_parser::ast::{Address, AddressBase, Function, Operand, StateSpace, VarDecl};
use rustc_hash::{FxHashMap, FxHashSet};

/// Registers a kernel and the functions it calls may declare in all (real kernels declare
/// thousands): bounds the lowering's name table before the memory budget sees the register
/// files.
pub(super) const MAX_REGISTERS: usize = 1 << 22;

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a).saturating_mul(a)
}

fn var_align(v: &VarDecl<'_>) -> u64 {
    u64::from(v.align.unwrap_or(0)).max(v.element_size().unwrap_or(1))
}

/// The power of two `var_align` guarantees (its largest power-of-two divisor), at most 2^31.
fn guaranteed_align(a: u64) -> u32 {
    1 << a.max(1).trailing_zeros().min(31)
}

impl<'m, 'a> Lowerer<'m, 'a> {
    /// Places module-scope and function-scope `.shared` variables of every reachable
    /// function, then the extern dynamic arrays after them.
    pub(super) fn layout_shared(&mut self, kernel: &'m Function<'a>) -> Result<(), Error> {
        let mut reachable: Vec<&'m Function<'a>> = vec![kernel];
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        seen.insert(kernel.name);
        let mut i = 0;
        while i < reachable.len() {
            if let Some(body) = &reachable[i].body {
                let mut callees = Vec::new();
                collect_callees(body, &mut callees);
                for c in callees {
                    if seen.insert(c)
                        && let Some(f) = self.module.function(c)
                    {
                        reachable.push(f);
                    }
                }
            }
            i += 1;
        }
        let mut decls: Vec<&'m VarDecl<'a>> = self
            .module
            .globals
            .iter()
            .filter(|v| v.space == StateSpace::Shared)
            .collect();
        for f in &reachable {
            if let Some(body) = &f.body {
                collect_shared(body, &mut decls);
            }
        }
        let mut offset: u64 = 0;
        let mut externs = Vec::new();
        for v in decls {
            match v.size_bytes() {
                Some(size) if !v.dims.iter().any(Option::is_none) => {
                    offset = align_up(offset, var_align(v));
                    let off = u32::try_from(offset)
                        .map_err(|_| err(v.line, "shared memory larger than 4 GiB"))?;
                    self.shared_offsets
                        .insert(v as *const VarDecl<'_> as usize, off);
                    self.ir.shared.push(SharedSymbol {
                        name: v.name.to_string(),
                        offset: off,
                        size: u32::try_from(size).ok(),
                        align: guaranteed_align(var_align(v)),
                    });
                    offset = offset.saturating_add(size);
                }
                _ => externs.push(v),
            }
        }
        if offset > u64::from(u32::MAX / 2) {
            return Err(err(kernel.line, "shared memory larger than 2 GiB"));
        }
        self.ir.shared_static = offset as u32;
        if !externs.is_empty() {
            let extern_align = externs.iter().map(|v| var_align(v)).max().unwrap_or(1);
            let start = align_up(offset, extern_align.max(16)) as u32;
            self.ir.extern_start = Some(start);
            for v in externs {
                self.shared_offsets
                    .insert(v as *const VarDecl<'_> as usize, start);
                self.ir.shared.push(SharedSymbol {
                    name: v.name.to_string(),
                    offset: start,
                    size: None,
                    align: guaranteed_align(extern_align),
                });
            }
        }
        Ok(())
    }

    pub(super) fn module_scope(
        &mut self,
        kernel: &'m Function<'a>,
        config: &Config,
    ) -> Result<(), Error> {
        let mut scope = Scope::default();
        let (data, placed) = DataLayout::new(self.module, self.ir.windows.data);
        self.ir.data = data;
        for v in &self.module.globals {
            let placed = placed
                .get(v.name)
                .and_then(|&i| self.ir.data.vars.get(i as usize));
            let loc = match v.space {
                StateSpace::Shared => VarLoc::Shared(self.shared_offset(v).unwrap_or(0)),
                StateSpace::Local => VarLoc::Local(self.alloc_local(v)),
                StateSpace::Global | StateSpace::Const if placed.is_some() => {
                    VarLoc::Data(placed.map_or(0, |d| d.offset))
                }
                StateSpace::Const => VarLoc::Const,
                _ => VarLoc::Global,
            };
            scope.vars.insert(v.name, loc);
        }
        let mut window: u64 = 0;
        // The declared parameters, then the variable of cluster launch control's answers
        // (`CLC_VARIABLE`: not a PTX identifier, so no instruction names it).
        for (i, p) in crate::params::kernel_params(kernel).iter().enumerate() {
            if i < kernel.params.len() {
                scope.vars.insert(p.name, VarLoc::KernelParam(i as u32));
            }
            let size = p.size_bytes().unwrap_or(8).min(1 << 20) as u32;
            window = align_up(window, var_align(p).min(4096));
            let offset = u32::try_from(window)
                .map_err(|_| err(p.line, "kernel parameters larger than 4 GiB"))?;
            window += u64::from(size);
            self.ir.kernel_params.push(KernelParam {
                name: p.name.to_string(),
                offset,
                size,
                aggregate: !p.dims.is_empty(),
                float: p.dims.is_empty() && matches!(p.ty, "f32" | "f64"),
                known: vec![None; size as usize],
                ranges: Vec::new(),
            });
        }
        let mut used = vec![false; config.params.len()];
        for r in resolve_params(kernel, &config.params, &mut used)? {
            // Resolved against this kernel's declarations: the parameter exists.
            let p = &mut self.ir.kernel_params[r.index];
            if let Some((size, lo, hi)) = r.range {
                // A parameter of unknown size is tracked as 8 bytes.
                let at = u32::try_from(r.offset)
                    .ok()
                    .filter(|&at| u64::from(at) + u64::from(size) <= u64::from(p.size));
                let Some(at) = at else {
                    return Err(ParamError::OutOfRange {
                        binding: r.binding,
                        param: r.index,
                        name: p.name.clone(),
                        start: r.offset,
                        end: r.end(),
                        size: u64::from(p.size),
                    }
                    .into());
                };
                p.ranges.push((at, size, lo, hi));
                continue;
            }
            for (k, &byte) in r.bytes.iter().enumerate() {
                let at = usize::try_from(r.offset)
                    .unwrap_or(usize::MAX)
                    .saturating_add(k);
                // A parameter of unknown size is tracked as 8 bytes.
                let slot = p.known.get_mut(at).ok_or_else(|| ParamError::OutOfRange {
                    binding: r.binding,
                    param: r.index,
                    name: p.name.clone(),
                    start: r.offset,
                    end: r.end(),
                    size: u64::from(p.size),
                })?;
                *slot = Some(byte);
            }
        }
        self.ir.kparam_size = u32::try_from(window)
            .map_err(|_| err(kernel.line, "kernel parameters larger than 4 GiB"))?;
        self.scopes.push(scope);
        Ok(())
    }

    pub(super) fn shared_offset(&self, v: &VarDecl<'_>) -> Option<u32> {
        self.shared_offsets
            .get(&(v as *const VarDecl<'_> as usize))
            .copied()
    }

    pub(super) fn alloc_local(&mut self, v: &VarDecl<'_>) -> u32 {
        let off = align_up(u64::from(self.ir.local_size), var_align(v)) as u32;
        let size = v.size_bytes().unwrap_or(0).min(1 << 20) as u32;
        self.ir.local_size = off.saturating_add(size);
        off
    }

    pub(super) fn alloc_param(&mut self, v: &VarDecl<'_>) -> (u32, u32) {
        let off = align_up(u64::from(self.ir.param_size), var_align(v)) as u32;
        let size = v.size_bytes().unwrap_or(8).min(1 << 16) as u32;
        self.ir.param_size = off.saturating_add(size);
        (off, size)
    }

    pub(super) fn declare(&mut self, scope: usize, v: &'m VarDecl<'a>) -> Result<(), Error> {
        match v.space {
            StateSpace::Reg => {
                let n = v.range.unwrap_or(1);
                if n > 1 << 20 {
                    return Err(err(v.line, "register range too large"));
                }
                self.declared_regs = self.declared_regs.saturating_add(n as usize);
                if self.declared_regs > MAX_REGISTERS {
                    return Err(err(
                        v.line,
                        format!(
                            "more than {MAX_REGISTERS} registers declared in the kernel and its functions"
                        ),
                    ));
                }
                let bits = register_bits(v.ty);
                match (v.range, v.vector) {
                    (None, Some(k @ 2..=4)) => {
                        // A vector variable: one register per component.
                        let base = self.ir.reg_names.len() as u32;
                        for c in ["x", "y", "z", "w"].iter().take(k as usize) {
                            self.ir.reg_names.push(format!("{}.{c}", v.name));
                            self.ir.reg_bits.push(bits);
                        }
                        self.declared_regs = self.declared_regs.saturating_add(k as usize);
                        self.scopes[scope].vectors.insert(v.name, (base, k));
                    }
                    (Some(n), _) => {
                        // The range's registers are placed when first used (`lookup_reg`).
                        let key = self.range_regs.len() as u32;
                        self.range_regs.push(FxHashMap::default());
                        self.range_bits.push(bits);
                        self.scopes[scope].ranges.insert(v.name, (key, n));
                    }
                    (None, _) => {
                        let base = self.ir.reg_names.len() as u32;
                        self.ir.reg_names.push(v.name.to_string());
                        self.ir.reg_bits.push(bits);
                        self.scopes[scope].regs.insert(v.name, base);
                    }
                }
            }
            StateSpace::Shared => {
                let off = self.shared_offset(v).unwrap_or(0);
                self.scopes[scope].vars.insert(v.name, VarLoc::Shared(off));
            }
            StateSpace::Local => {
                let off = self.alloc_local(v);
                self.scopes[scope].vars.insert(v.name, VarLoc::Local(off));
            }
            StateSpace::Param => {
                let (off, _) = self.alloc_param(v);
                self.scopes[scope].vars.insert(v.name, VarLoc::Param(off));
            }
            StateSpace::Const => {
                self.scopes[scope].vars.insert(v.name, VarLoc::Const);
            }
            _ => {
                self.scopes[scope].vars.insert(v.name, VarLoc::Global);
            }
        }
        Ok(())
    }

    pub(super) fn lookup_reg(&mut self, scope: usize, name: &str) -> Option<RegId> {
        let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, num) = name.split_at(digits);
        let num: Option<u32> = num.parse().ok();
        // A component of a vector variable: `v.x` (or `.r`, `.g`, `.b`, `.a`).
        let component = name.rsplit_once('.').and_then(|(v, c)| {
            let k = match c {
                "x" | "r" => 0,
                "y" | "g" => 1,
                "z" | "b" => 2,
                "w" | "a" => 3,
                _ => return None,
            };
            Some((v, k))
        });
        let mut s = Some(scope);
        while let Some(i) = s {
            let sc = &self.scopes[i];
            if let Some(&r) = sc.regs.get(name) {
                return Some(RegId(r));
            }
            if let Some((v, k)) = component
                && let Some(&(base, n)) = sc.vectors.get(v)
                && k < n
            {
                return Some(RegId(base + k));
            }
            if let Some(n) = num
                && let Some(&(key, count)) = sc.ranges.get(prefix)
                && n < count
            {
                let next = self.ir.reg_names.len() as u32;
                let used = self.range_regs.get_mut(key as usize)?;
                let r = *used.entry(n).or_insert(next);
                if r == next {
                    self.ir.reg_names.push(format!("{prefix}{n}"));
                    let bits = self.range_bits.get(key as usize).copied().unwrap_or(64);
                    self.ir.reg_bits.push(bits);
                }
                return Some(RegId(r));
            }
            s = sc.parent;
        }
        None
    }

    /// The vector variable `name` (`.reg .v4 …`): its first register and components.
    fn lookup_vector(&self, scope: usize, name: &str) -> Option<(u32, u32)> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(&v) = self.scopes[i].vectors.get(name) {
                return Some(v);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    pub(super) fn lookup_var(&self, scope: usize, name: &str) -> Option<VarLoc> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(&v) = self.scopes[i].vars.get(name) {
                return Some(v);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    pub(super) fn reg(&mut self, scope: usize, name: &str, line: u32) -> Result<Opnd, Error> {
        if let Some(r) = self.lookup_reg(scope, name) {
            return Ok(Opnd::Reg(r));
        }
        if let Some(s) = parse_sreg(name) {
            return Ok(Opnd::Sreg(s));
        }
        Err(err(line, format!("undeclared register `{name}`")))
    }

    pub(super) fn operand(
        &mut self,
        scope: usize,
        op: &Operand<'a>,
        line: u32,
        label_ok: bool,
    ) -> Result<Opnd, Error> {
        Ok(match op {
            Operand::Reg(name) => self.reg(scope, name, line)?,
            Operand::NotReg(name) => match self.reg(scope, name, line)? {
                Opnd::Reg(r) => Opnd::NotReg(r),
                _ => return Err(err(line, format!("cannot negate `{name}`"))),
            },
            Operand::PredPair(a, b) => {
                // Either half may be the sink `_` (`elect.sync _|%p, -1;` in CuTe DSL inline
                // asm discards the leader's lane id).
                let a = if *a == "_" {
                    Opnd::Sink
                } else {
                    self.reg(scope, a, line)?
                };
                let b = if *b == "_" {
                    Opnd::Sink
                } else {
                    self.reg(scope, b, line)?
                };
                let start = self.ir.opnds.len() as u32;
                self.ir.opnds.push(a);
                self.ir.opnds.push(b);
                // The list is appended after the instruction's own operands by the caller;
                // here it lives where we pushed it.
                Opnd::List(start, 2)
            }
            Operand::Int(v) => Opnd::Imm(*v as u64),
            Operand::F32(bits) => Opnd::Imm(u64::from(*bits)),
            Operand::F64(bits) => Opnd::Imm(*bits),
            Operand::Symbol { name, offset } => {
                if label_ok {
                    // Resolved by the caller (branch target or callee).
                    Opnd::Sink
                } else if let Some(r) = self.lookup_reg(scope, name) {
                    Opnd::Reg(r)
                } else if let Some((base, n)) = self.lookup_vector(scope, name) {
                    // A whole vector variable: the list of its components.
                    let start = self.ir.opnds.len() as u32;
                    self.ir
                        .opnds
                        .extend((base..base + n).map(|r| Opnd::Reg(RegId(r))));
                    Opnd::List(start, n)
                } else {
                    match self.lookup_var(scope, name) {
                        Some(VarLoc::Shared(o)) => {
                            Opnd::Imm((i64::from(o).wrapping_add(*offset)) as u64)
                        }
                        Some(VarLoc::Local(o)) => {
                            Opnd::Imm((i64::from(o).wrapping_add(*offset)) as u64)
                        }
                        // Call arguments and return buffers: the parameter window.
                        Some(VarLoc::Param(o)) => {
                            Opnd::Mem(MemBase::Param, i64::from(o).wrapping_add(*offset))
                        }
                        // The `.param`-space address of a kernel parameter.
                        Some(VarLoc::KernelParam(i)) => {
                            let base = self
                                .ir
                                .kernel_params
                                .get(i as usize)
                                .map_or(0, |p| u64::from(p.offset));
                            Opnd::Imm(
                                self.ir
                                    .windows
                                    .param_space
                                    .wrapping_add(base)
                                    .wrapping_add(*offset as u64),
                            )
                        }
                        Some(VarLoc::Data(o)) => Opnd::Imm(
                            self.ir
                                .windows
                                .data
                                .wrapping_add(u64::from(o))
                                .wrapping_add(*offset as u64),
                        ),
                        Some(VarLoc::Global) => {
                            Opnd::UnknownAddr("the address of a global variable")
                        }
                        Some(VarLoc::Const) => {
                            Opnd::UnknownAddr("the address of a constant variable")
                        }
                        None => {
                            if self.module.functions.iter().any(|f| f.name == *name) {
                                Opnd::UnknownAddr("the address of a function")
                            } else {
                                return Err(err(line, format!("undeclared symbol `{name}`")));
                            }
                        }
                    }
                }
            }
            Operand::Address(Address { base, offset }) => match base {
                AddressBase::Reg(name) => match self.reg(scope, name, line)? {
                    Opnd::Reg(r) => Opnd::Mem(MemBase::Reg(r), *offset),
                    _ => Opnd::Mem(MemBase::Global, *offset),
                },
                AddressBase::Absolute => Opnd::Mem(MemBase::Abs, *offset),
                AddressBase::Symbol(name) => {
                    if let Some(r) = self.lookup_reg(scope, name) {
                        Opnd::Mem(MemBase::Reg(r), *offset)
                    } else {
                        match self.lookup_var(scope, name) {
                            Some(VarLoc::Shared(o)) => {
                                Opnd::Mem(MemBase::Shared, i64::from(o).wrapping_add(*offset))
                            }
                            Some(VarLoc::Local(o)) => {
                                Opnd::Mem(MemBase::Local, i64::from(o).wrapping_add(*offset))
                            }
                            Some(VarLoc::Param(o)) => {
                                Opnd::Mem(MemBase::Param, i64::from(o).wrapping_add(*offset))
                            }
                            Some(VarLoc::KernelParam(i)) => {
                                Opnd::Mem(MemBase::KernelParam(i), *offset)
                            }
                            Some(VarLoc::Data(o)) => Opnd::Mem(
                                MemBase::Abs,
                                (self.ir.windows.data.wrapping_add(u64::from(o)) as i64)
                                    .wrapping_add(*offset),
                            ),
                            Some(VarLoc::Global) | Some(VarLoc::Const) => {
                                Opnd::Mem(MemBase::Global, *offset)
                            }
                            None => return Err(err(line, format!("undeclared symbol `{name}`"))),
                        }
                    }
                }
            },
            Operand::Vector(items) | Operand::Bracket(items) | Operand::Paren(items) => {
                let mut lowered = Vec::with_capacity(items.len());
                for it in items {
                    lowered.push(self.operand(scope, it, line, false)?);
                }
                let start = self.ir.opnds.len() as u32;
                self.ir.opnds.extend(lowered);
                Opnd::List(start, items.len() as u32)
            }
            Operand::Sink => Opnd::Sink,
        })
    }
}

/// The width in bits of a register declared with type `ty` (`pred`: 1; unsized or unknown
/// types: 64).
fn register_bits(ty: &str) -> u8 {
    if ty == "pred" {
        return 1;
    }
    ptx_parser::ast::scalar_type_size(ty).map_or(64, |b| (b * 8).min(64) as u8)
}
