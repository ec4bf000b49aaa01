//! Calls to functions declared without a body (`__assertfail`, `vprintf`, anything else),
//! traps, the assumption that assertions hold, and loads from initialized module data.

use crate::unverifiable::Why;
use weft_program::InstId;

use super::{Machine, State};
use crate::ir::{Extern, MemBase, Opnd, Space, assertion_branch, traps_from};
use crate::{Assumption, FindingKind, ValueSource};

impl Machine<'_> {
    /// `trap`, or a call of `__assertfail`, executed by thread `t`.
    pub(super) fn trap(&mut self, t: usize, pc: u32) {
        if self.th[t].may > 0 {
            self.note_once(format!(
                "`{}` at PTX line {} is reachable under an input-dependent condition",
                self.opcode(pc),
                self.line(pc)
            ));
            self.th[t].path_exit = true;
            return;
        }
        if self.cluster_read && !self.ir.explicit_cluster {
            // The cluster shape is a launch setting like the grid; a 2-SM kernel's assertion
            // that its cluster holds two CTAs fails for the 1x1x1 cluster weft emulates
            // (CUTLASS example 75), which says nothing about the launches it is made for.
            self.unverifiable(t, pc, Why::TrapAloneInCluster, None, 0, true);
            return;
        }
        self.th[t].state = State::Trapped(pc);
        self.trapped = true;
        // An assertion on inputs the exploration decided (a loop's trip count chosen 0, or a
        // value fixed for a path's witness or the induction's base) arrives here with a
        // known predicate: the exploration tells it from a trap that every input reaches by
        // whether another path avoids it.
        if !self.failed_assertions.iter().any(|a| a.inst.0 == pc)
            && let Some(branch) = assertion_branch(self.ir, pc)
        {
            self.failed_assertions.push(Assumption {
                inst: InstId(pc),
                branch: InstId(branch),
                assertion: self.ir.asserts.get(&pc).cloned(),
            });
        }
        let message = match self.ir.asserts.get(&pc) {
            Some(a) => {
                let what = a
                    .message
                    .as_deref()
                    .map_or_else(|| "an assertion".to_owned(), |m| format!("assertion `{m}`"));
                let at = match (&a.file, a.line) {
                    (Some(f), Some(l)) => format!(" ({f}:{l})"),
                    _ => String::new(),
                };
                let function = a
                    .function
                    .as_deref()
                    .map(|f| format!(" in `{f}`"))
                    .unwrap_or_default();
                format!(
                    "{what}{at}{function} fails whatever the input: `__assertfail` aborts the kernel"
                )
            }
            None => format!(
                "`{}` at PTX line {} is reached whatever the input",
                self.opcode(pc),
                self.line(pc)
            ),
        };
        self.finding(t, pc, FindingKind::TrapReachable, message);
    }

    /// A call to a function the module declares without a body.
    pub(super) fn call_extern(&mut self, t: usize, pc: u32, ops: &[Opnd], e: Extern) {
        match e {
            Extern::AssertFail => self.trap(t, pc),
            Extern::Printf => self.printf(t, pc, ops),
            Extern::Unknown => self.call_extern_unknown(t, pc, None, 0),
        }
    }

    /// A call whose callee weft cannot see: the kernel is unverifiable.
    pub(super) fn call_extern_unknown(&mut self, t: usize, pc: u32, reg: Option<Opnd>, u: u32) {
        let name = self
            .ir
            .insts
            .get(pc as usize)
            .and_then(|i| {
                self.ir.operands(i).iter().find_map(|o| match o {
                    Opnd::Func(f) => self.ir.funcs.get(f.index()),
                    _ => None,
                })
            })
            .map_or("?", |f| f.name.as_str());
        let why = Why::ExternCall {
            name: name.to_string(),
        };
        self.unverifiable(t, pc, why, reg, u, true);
    }

    /// `vprintf(format, args)`: its argument buffer is local memory and it neither
    /// synchronizes nor writes shared memory; its result is unknown. A `%s` argument could
    /// point into shared memory; that read is not recorded, and a note says so.
    fn printf(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let fpos = ops.iter().position(|o| matches!(o, Opnd::Func(_)));
        let result = self.src.single(ValueSource::Other("the result of printf"));
        if let Some(Opnd::List(s, l)) = fpos.and_then(|k| k.checked_sub(1)).and_then(|k| ops.get(k))
        {
            let pbase = t * self.ir.param_size as usize;
            for r in self.ir.list(*s, *l).to_vec() {
                if let Opnd::Mem(MemBase::Param, off) = r
                    && let Ok(off) = usize::try_from(off)
                {
                    self.write_bytes(super::memory::Mem::Param, pbase, off, 4, 0, result);
                }
            }
        }
        let format = match fpos.and_then(|k| ops.get(k + 1)) {
            Some(Opnd::List(s, l)) => self.ir.list(*s, *l).first().copied(),
            _ => None,
        };
        let format = match format {
            Some(Opnd::Mem(MemBase::Param, off)) => usize::try_from(off).ok().and_then(|off| {
                let pbase = t * self.ir.param_size as usize;
                let (v, u) = self.read_bytes(super::memory::Mem::Param, pbase, off, 8);
                let off = self.win.offset(v, self.win.data).filter(|_| u == 0)?;
                self.ir.data.string(off)
            }),
            _ => None,
        };
        let line = self.line(pc);
        match format {
            Some(f) if !f.contains("%s") => {}
            Some(_) => self.note_once(format!(
                "printf at PTX line {line} prints a string (%s): the bytes it reads are not checked for races"
            )),
            None => self.note_once(format!(
                "printf at PTX line {line} has a format weft cannot read: a string it prints (%s) from shared memory would not be checked for races"
            )),
        }
    }

    /// At a branch on an unknown predicate: when one side is doomed (it only leads to a
    /// trap), records the assumption that it is not taken and continues on the other side.
    pub(super) fn assume_not_doomed(&mut self, t: usize, pc: u32, target: u32, fall: u32) -> bool {
        let doomed = |x: u32| self.ir.doomed.get(x as usize).copied().unwrap_or(false);
        let next = match (doomed(target), doomed(fall)) {
            (true, false) => {
                self.assume_not_taken(t, pc, target);
                fall
            }
            (false, true) => {
                self.assume_not_taken(t, pc, fall);
                target
            }
            _ => return false,
        };
        self.th[t].pc = next;
        true
    }

    /// Records that the traps reachable from `start` (doomed code entered by the branch at
    /// `branch`, or a guarded trap itself) are assumed not to be reached, and moves a guarded
    /// trap's thread past it.
    pub(super) fn assume_not_taken(&mut self, t: usize, branch: u32, start: u32) {
        if branch == start {
            self.th[t].pc = branch + 1;
        }
        if !self.assumed_from.insert(branch) {
            return;
        }
        for site in traps_from(self.ir, start) {
            if self.assumptions.iter().any(|a| a.inst.0 == site) {
                continue;
            }
            self.assumptions.push(Assumption {
                inst: InstId(site),
                branch: InstId(branch),
                assertion: self.ir.asserts.get(&site).cloned(),
            });
        }
    }

    /// `size` bytes at data-window offset `off`: the initializer's bytes when the load lies
    /// inside one trusted initialized variable, else an unknown global (or constant) load.
    pub(super) fn data_load(&mut self, pc: u32, space: Space, off: u64, size: u32) -> (u64, u32) {
        if let Some((k, var)) = self.ir.data.find(off)
            && self.data_trusted.get(k).copied().unwrap_or(false)
            && let Some(bytes) = var.bytes.as_deref()
        {
            let start = (off - u64::from(var.offset)) as usize;
            if let Some(b) = bytes.get(start..start + size.min(8) as usize) {
                let mut v = [0u8; 8];
                v[..b.len()].copy_from_slice(b);
                if let Some(r) = self.data_read.get_mut(k) {
                    *r = true;
                }
                return (u64::from_le_bytes(v), 0);
            }
        }
        let src = if space == Space::Const {
            ValueSource::ConstLoad(InstId(pc))
        } else {
            ValueSource::GlobalLoad(InstId(pc))
        };
        (0, self.src.single(src))
    }

    /// A store, atomic or reduction into the data window: the variables it touches are
    /// written by the kernel.
    pub(super) fn data_write(&mut self, off: u64, size: u32) {
        let last = off.saturating_add(u64::from(size.max(1)) - 1);
        for at in [off, last] {
            if let Some((k, _)) = self.ir.data.find(at)
                && let Some(w) = self.data_written.get_mut(k)
            {
                *w = true;
            }
        }
    }

    /// The notes that say which initializers the verdict relies on.
    pub(super) fn data_notes(&mut self) {
        let names = |flags: &[bool], also: &dyn Fn(usize) -> bool| -> Vec<String> {
            self.ir
                .data
                .vars
                .iter()
                .enumerate()
                .filter(|&(k, _)| flags.get(k).copied().unwrap_or(false) && also(k))
                .map(|(_, v)| format!("`{}`", v.name))
                .collect()
        };
        let read = names(&self.data_read, &|_| true);
        let trusted = self.data_trusted.clone();
        let rewritten = if self.cfg.initializers {
            names(&self.data_written, &|k| {
                !trusted.get(k).copied().unwrap_or(true)
            })
        } else {
            Vec::new()
        };
        if !read.is_empty() {
            self.notes.push(format!(
                "loads from initialized module variables ({}) return their initializers: the verdict assumes the host does not overwrite them before the launch (--no-initializers treats them as unknown)",
                read.join(", ")
            ));
        }
        if !rewritten.is_empty() {
            self.notes.push(format!(
                "the kernel writes the initialized variables {}, so their loads are unknown",
                rewritten.join(", ")
            ));
        }
    }

    fn note_once(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}
