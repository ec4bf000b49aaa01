//! Lowering one kernel and the functions it calls from the PTX AST into the IR.

use crate::ir::decode::decode;
use crate::ir::{
    DataLayout, Extern, Func, FuncId, Inst, Ir, Op, Opnd, Pc, Space, Ty, Windows, WmmaMem,
};
use crate::{Config, Error};
use ptx_parser::ast::{
    Block, Function, Instruction, Module, Operand, StateSpace, Statement, VarDecl,
};
use rustc_hash::FxHashMap;
use weft_program::{CudaLoc, InstSite, SourceTable};

mod scope;

#[derive(Debug, Clone, Copy)]
pub(super) enum VarLoc {
    Shared(u32),
    Local(u32),
    Param(u32),
    KernelParam(u32),
    /// An initialized module variable at this data-window offset.
    Data(u32),
    Global,
    Const,
}

#[derive(Default)]
struct Scope<'a> {
    parent: Option<usize>,
    regs: FxHashMap<&'a str, u32>,
    /// `.reg .b32 %r<N>`: prefix → (index into [`Lowerer::range_regs`], N).
    ranges: FxHashMap<&'a str, (u32, u32)>,
    /// `.reg .v4 .s32 v`: name → (first component's register, components); `v.x` … `v.w`
    /// are consecutive registers (quack's `store_shared_remote_x4`).
    vectors: FxHashMap<&'a str, (u32, u32)>,
    vars: FxHashMap<&'a str, VarLoc>,
    labels: FxHashMap<&'a str, u32>,
    /// `.branchtargets` tables: name → target labels (resolved in this scope).
    tables: FxHashMap<&'a str, Vec<&'a str>>,
}

struct Fixup<'a> {
    slot: usize,
    scope: usize,
    name: &'a str,
    line: u32,
}

pub(super) struct Lowerer<'m, 'a> {
    module: &'m Module<'a>,
    ir: Ir,
    scopes: Vec<Scope<'a>>,
    func_index: FxHashMap<&'a str, FuncId>,
    worklist: Vec<&'m Function<'a>>,
    shared_offsets: FxHashMap<usize, u32>,
    file_index: FxHashMap<u32, u32>,
    fixups: Vec<Fixup<'a>>,
    calls: Vec<(FuncId, FuncId)>,
    /// Per declared register range: the registers of it used so far (number → register).
    /// A range's registers get an index in the register file only when an instruction
    /// names them: `.reg .b32 %r<100000>` costs nothing per thread for the unused ones.
    range_regs: Vec<FxHashMap<u32, u32>>,
    /// The declared width of each range's registers (parallel to `range_regs`).
    range_bits: Vec<u8>,
    /// Registers declared so far (ranges counted whole), for [`scope::MAX_REGISTERS`].
    declared_regs: usize,
}

fn err(line: u32, message: impl Into<String>) -> Error {
    Error::Lowering {
        line,
        message: message.into(),
    }
}

/// Lowers `kernel` and the functions it calls.
pub(crate) fn lower(
    module: &Module<'_>,
    kernel: &Function<'_>,
    config: &Config,
) -> Result<Ir, Error> {
    let mut l = Lowerer {
        module,
        ir: Ir {
            insts: Vec::new(),
            opnds: Vec::new(),
            funcs: Vec::new(),
            reg_names: Vec::new(),
            reg_bits: Vec::new(),
            sources: SourceTable::default(),
            shared: Vec::new(),
            shared_static: 0,
            extern_start: None,
            local_size: 0,
            param_size: 0,
            kernel_params: Vec::new(),
            kparam_size: 0,
            windows: Windows::new(module.address_size.unwrap_or(64)),
            ipdom: Vec::new(),
            reaches_exit: Vec::new(),
            explicit_cluster: kernel.perf.explicitcluster
                || kernel.perf.reqnctapercluster.is_some(),
            cross_collectives: super::meets_across_instructions(&module.target),
            notes: Vec::new(),
            data: DataLayout::default(),
            asserts: FxHashMap::default(),
            doomed: Vec::new(),
            unobserved: Vec::new(),
            input_loads: Vec::new(),
            tmem_users: Vec::new(),
            value_observed: Vec::new(),
        },
        scopes: Vec::new(),
        func_index: FxHashMap::default(),
        worklist: Vec::new(),
        shared_offsets: FxHashMap::default(),
        file_index: FxHashMap::default(),
        fixups: Vec::new(),
        calls: Vec::new(),
        range_regs: Vec::new(),
        range_bits: Vec::new(),
        declared_regs: 0,
    };
    for (i, f) in module.files.iter().enumerate() {
        l.file_index.insert(f.index, i as u32);
        l.ir.sources.files.push(f.path.to_string());
    }
    l.layout_shared(kernel)?;
    l.module_scope(kernel, config)?;
    l.func_index.insert(kernel.name, FuncId(0));
    l.ir.funcs.push(Func {
        name: kernel.name.to_string(),
        start: Pc(0),
        end: Pc(0),
        params: Vec::new(),
        rets: Vec::new(),
        has_sync: false,
        body: true,
    });
    l.worklist.push(kernel);
    let mut next = 0;
    while next < l.worklist.len() {
        let f = l.worklist[next];
        l.lower_function(FuncId(next as u32), f)?;
        next += 1;
    }
    super::valid::validate(&l.ir)?;
    super::contract::uncontract(&mut l.ir);
    l.ir.finish_sync_flags(&l.calls);
    l.ir.doomed = super::doomed::doomed(&l.ir);
    l.ir.asserts = super::doomed::assert_sites(&l.ir);
    (l.ir.unobserved, l.ir.input_loads) = super::observed::observed_insts(&l.ir);
    l.ir.tmem_users = super::observed::tmem_register_users(&l.ir);
    l.ir.value_observed = super::observed::value_observed_insts(&l.ir);
    l.ir.compute_ipdoms();
    Ok(l.ir)
}

impl<'m, 'a> Lowerer<'m, 'a> {
    fn func_id(&mut self, name: &'a str, line: u32) -> Result<FuncId, Error> {
        if let Some(&id) = self.func_index.get(name) {
            return Ok(id);
        }
        let f = self.module.function(name);
        if f.is_none() && !self.module.functions.iter().any(|f| f.name == name) {
            return Err(err(
                line,
                format!("call to `{name}`, which is not declared"),
            ));
        }
        let id = FuncId(self.ir.funcs.len() as u32);
        self.func_index.insert(name, id);
        self.ir.funcs.push(Func {
            name: name.to_string(),
            start: Pc(0),
            end: Pc(0),
            params: Vec::new(),
            rets: Vec::new(),
            has_sync: false,
            body: f.is_some(),
        });
        if let Some(f) = f {
            self.worklist.push(f);
        }
        Ok(id)
    }

    fn lower_function(&mut self, id: FuncId, f: &'m Function<'a>) -> Result<(), Error> {
        let mut scope = Scope {
            parent: Some(0),
            ..Scope::default()
        };
        if f.kind == ptx_parser::ast::FunctionKind::Func {
            let mut params = Vec::new();
            let mut rets = Vec::new();
            for p in &f.params {
                let (off, size) = self.alloc_param(p);
                params.push((off, size));
                scope.vars.insert(p.name, VarLoc::Param(off));
            }
            for p in &f.returns {
                let (off, size) = self.alloc_param(p);
                rets.push((off, size));
                scope.vars.insert(p.name, VarLoc::Param(off));
            }
            if let Some(func) = self.ir.funcs.get_mut(id.index()) {
                func.params = params;
                func.rets = rets;
            }
        }
        let start = self.ir.insts.len() as u32;
        self.scopes.push(scope);
        let fscope = self.scopes.len() - 1;
        if let Some(body) = &f.body {
            self.lower_block(id, body, fscope)?;
        }
        // A label just before the closing brace names the function's end: falling through
        // (or branching) there returns, so give it an instruction to name.
        let at_end = self.ir.insts.len() as u32;
        if self.scopes[fscope..]
            .iter()
            .any(|sc| sc.labels.values().any(|&l| l == at_end))
        {
            self.push_implicit_ret(id, f);
        }
        let end = self.ir.insts.len() as u32;
        if let Some(func) = self.ir.funcs.get_mut(id.index()) {
            func.start = Pc(start);
            func.end = Pc(end);
        }
        for fix in std::mem::take(&mut self.fixups) {
            let mut s = Some(fix.scope);
            let mut target = None;
            while let Some(i) = s {
                if let Some(&t) = self.scopes[i].labels.get(fix.name) {
                    target = Some(t);
                    break;
                }
                s = self.scopes[i].parent;
            }
            let t = target.ok_or_else(|| {
                err(
                    fix.line,
                    format!("branch to undefined label `{}`", fix.name),
                )
            })?;
            if t >= end {
                return Err(err(
                    fix.line,
                    format!(
                        "label `{}` is at the end of the function with no instruction after it",
                        fix.name
                    ),
                ));
            }
            self.ir.opnds[fix.slot] = Opnd::Label(Pc(t));
        }
        Ok(())
    }

    /// Appends a `ret` that no PTX line spells (the end of function `id`).
    fn push_implicit_ret(&mut self, id: FuncId, f: &Function<'_>) {
        let last = self.ir.sources.sites.last().cloned();
        let ops = self.ir.opnds.len() as u32;
        self.ir.insts.push(Inst {
            op: Op::Ret,
            ty: Ty::NONE,
            ty2: Ty::NONE,
            vec: 0,
            space: Space::Generic,
            guard: None,
            guard_neg: false,
            aligned: false,
            sat: false,
            round: 0,
            ftz: false,
            strong: false,
            ops,
            nops: 0,
            func: id,
        });
        self.ir.sources.sites.push(InstSite {
            ptx_line: last.as_ref().map_or(f.line, |s| s.ptx_line),
            ptx_column: 0,
            cuda: None,
            inlined_at: None,
            opcode: "ret".into(),
        });
    }

    fn lower_block(
        &mut self,
        func: FuncId,
        block: &'m Block<'a>,
        parent: usize,
    ) -> Result<(), Error> {
        self.scopes.push(Scope {
            parent: Some(parent),
            ..Scope::default()
        });
        let scope = self.scopes.len() - 1;
        // Declarations and jump tables are visible in the whole block.
        for st in &block.statements {
            match st {
                Statement::Var(v) => self.declare(scope, v)?,
                Statement::BranchTargets { name, targets, .. } => {
                    self.scopes[scope].tables.insert(name, targets.clone());
                }
                _ => {}
            }
        }
        for st in &block.statements {
            match st {
                Statement::Label { name, line } => {
                    let pc = self.ir.insts.len() as u32;
                    // ptxas rejects a label defined twice in one scope; taking either
                    // definition would be a silent guess at the branch targets.
                    if self.scopes[scope].labels.insert(name, pc).is_some() {
                        return Err(err(*line, format!("duplicate label `{name}`")));
                    }
                }
                Statement::Instruction(inst) => self.lower_inst(func, scope, inst)?,
                Statement::Block(b) => self.lower_block(func, b, scope)?,
                Statement::Var(_)
                | Statement::Pragma { .. }
                | Statement::CallPrototype { .. }
                | Statement::BranchTargets { .. }
                | Statement::CallTargets { .. } => {}
            }
        }
        Ok(())
    }

    fn lower_inst(
        &mut self,
        func: FuncId,
        scope: usize,
        inst: &'m Instruction<'a>,
    ) -> Result<(), Error> {
        let line = inst.line;
        let mut d = decode(inst);
        let mut ops = Vec::with_capacity(inst.operands.len());
        let mut label_slots = Vec::new();
        let first_symbol = inst
            .operands
            .iter()
            .position(|o| matches!(o, Operand::Symbol { .. }));
        for (k, o) in inst.operands.iter().enumerate() {
            let is_target =
                matches!(d.op, Op::Bra | Op::BraIdx | Op::Call) && Some(k) == first_symbol;
            if is_target {
                label_slots.push(k);
            }
            ops.push(self.operand(scope, o, line, is_target)?);
        }
        let start = self.ir.opnds.len() as u32;
        let base = start as usize;
        self.ir.opnds.extend(ops);
        for k in label_slots {
            let Some(Operand::Symbol { name, .. }) = inst.operands.get(k) else {
                continue;
            };
            if d.op == Op::Bra {
                self.fixups.push(Fixup {
                    slot: base + k,
                    scope,
                    name,
                    line,
                });
            } else if d.op == Op::BraIdx {
                self.ir.opnds[base + k] = self.branch_table(scope, name, line)?;
            } else {
                let id = self.func_id(name, line)?;
                self.ir.opnds[base + k] = Opnd::Func(id);
                if self.ir.funcs.get(id.index()).is_some_and(|f| f.body) {
                    self.calls.push((func, id));
                } else {
                    d.op = Op::CallExtern(Extern::of(name));
                }
            }
        }
        let guard = match inst.guard {
            Some(g) => match self.reg(scope, g.predicate, line)? {
                Opnd::Reg(r) => (Some(r), g.negated),
                _ => return Err(err(line, "guard is not a predicate register")),
            },
            None => (None, false),
        };
        let nops = u8::try_from(inst.operands.len()).map_err(|_| err(line, "too many operands"))?;
        self.ir.insts.push(Inst {
            op: d.op,
            ty: d.ty,
            ty2: d.ty2,
            vec: d.vec,
            space: d.space,
            guard: guard.0,
            guard_neg: guard.1,
            aligned: d.aligned,
            sat: d.sat,
            round: d.round,
            ftz: d.ftz,
            strong: d.strong,
            ops: start,
            nops,
            func,
        });
        let cuda = inst.loc.and_then(|l| {
            Some(CudaLoc {
                file: *self.file_index.get(&l.file)?,
                line: l.line,
                column: l.column,
            })
        });
        let inlined_at = inst.loc.and_then(|l| l.inlined_at).and_then(|a| {
            Some(CudaLoc {
                file: *self.file_index.get(&a.file)?,
                line: a.line,
                column: a.column,
            })
        });
        let opcode = if inst.modifiers.is_empty() {
            inst.opcode.to_string()
        } else {
            format!("{}.{}", inst.opcode, inst.modifiers)
        };
        self.ir.sources.sites.push(InstSite {
            ptx_line: line,
            ptx_column: inst.column,
            cuda,
            inlined_at,
            opcode: opcode.into_boxed_str(),
        });
        if matches!(
            d.op,
            Op::TensorCore
                | Op::TcgenLd
                | Op::TcgenSt
                | Op::TcgenMma
                | Op::TcgenCp
                | Op::Wmma(WmmaMem { store: true, .. })
        ) {
            self.tensor_core_note(inst, line);
        }
        Ok(())
    }

    /// The note for a tensor-core instruction the emulator skips, or the approximations of
    /// tensor memory, once per kind. `mma.sync` and `movmatrix` work on registers only: their
    /// unknown results need no note.
    fn tensor_core_note(&mut self, inst: &Instruction<'_>, line: u32) {
        let (prefix, what) = match inst.opcode {
            "wmma" if inst.has_modifier("store") => (
                "wmma.store",
                "is taken to write the whole matrix from every lane of the warp (the PTX ISA \
                 does not say which lane holds which element): a read of it by another lane \
                 of the warp needs something that orders it after the store (__syncwarp), \
                 and the lanes' writes of one store are not a race with each other (the rule \
                 for several lanes' writes of one instruction)",
            ),
            "tcgen05" => (
                "tensor memory",
                "is checked for races with two approximations: tcgen05.alloc returns the \
                 lowest free columns, each allocation aligned to its size (the checks hold for \
                 every other placement unless the kernel's behaviour depends on the address \
                 itself, not only on differences of tensor-memory addresses), and tcgen05.fence \
                 is not required (the threads' synchronization alone orders their \
                 tensor-memory accesses: a missing tcgen05.fence::before_thread_sync or \
                 ::after_thread_sync is not reported); tcgen05.ld results are unknown",
            ),
            _ => return,
        };
        if !self.ir.notes.iter().any(|n| n.starts_with(prefix)) {
            self.ir.notes.push(format!(
                "{prefix} (first: `{}.{}` at PTX line {line}) {what}",
                inst.opcode, inst.modifiers
            ));
        }
    }

    /// The jump table `name` of a `brx.idx` (innermost scope first) as an [`Opnd::List`] of
    /// label slots, each resolved like a branch target in the table's own scope.
    fn branch_table(&mut self, scope: usize, name: &'a str, line: u32) -> Result<Opnd, Error> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(targets) = self.scopes[i].tables.get(name) {
                let targets = targets.clone();
                let n = u32::try_from(targets.len())
                    .map_err(|_| err(line, format!("jump table `{name}` is too large")))?;
                let start = self.ir.opnds.len();
                for (k, target) in targets.into_iter().enumerate() {
                    // A placeholder until the fixup resolves the label.
                    self.ir.opnds.push(Opnd::Sink);
                    self.fixups.push(Fixup {
                        slot: start + k,
                        scope: i,
                        name: target,
                        line,
                    });
                }
                return Ok(Opnd::List(start as u32, n));
            }
            s = self.scopes[i].parent;
        }
        Err(err(
            line,
            format!("`brx.idx` names `{name}`, which is not a `.branchtargets` table in scope"),
        ))
    }
}

fn collect_callees<'a>(block: &Block<'a>, out: &mut Vec<&'a str>) {
    for st in &block.statements {
        match st {
            Statement::Instruction(i) if i.opcode == "call" => {
                for o in &i.operands {
                    if let Operand::Symbol { name, .. } = o {
                        out.push(name);
                    }
                }
            }
            Statement::Block(b) => collect_callees(b, out),
            _ => {}
        }
    }
}

fn collect_shared<'m, 'a>(block: &'m Block<'a>, out: &mut Vec<&'m VarDecl<'a>>) {
    for st in &block.statements {
        match st {
            Statement::Var(v) if v.space == StateSpace::Shared => out.push(v),
            Statement::Block(b) => collect_shared(b, out),
            _ => {}
        }
    }
}
