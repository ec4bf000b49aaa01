//! The end of an emulation: the per-thread programs and everything the run found, as an
//! [`Emulation`].

use super::{Machine, State};
use crate::{Emulation, Error, Stats};
use weft_program::{AsyncOps, InstId, Program, ThreadEnd, ThreadProgram, WARP_SIZE};

impl Machine<'_> {
    /// The emulation's result, once no thread can run.
    pub(super) fn finish(mut self) -> Result<Emulation, Error> {
        self.unfinished_tma();
        self.tensor_memory_at_exit();
        self.clip_tma_extents();
        self.split_tma_load_prefixes();
        self.charge_tma_stores();
        let mut stuck_collective = Vec::new();
        for t in 0..self.n {
            if let State::Coll(pc) = self.th[t].state
                && !self.stop
                && !self.trapped
            {
                stuck_collective.push((t, pc));
            }
        }
        for &(t, pc) in &stuck_collective {
            self.stuck_collective(t, pc);
        }
        if !self.stop && !self.trapped {
            self.check_warpgroup_alignment();
        }
        let stopped = self.stop || self.trapped;
        self.data_notes();
        if self.src.terms.values_ran_out() {
            self.notes.push(format!(
                "value terms ran out of their budget of {} nodes: values computed after that \
                 are compared as unknown, so their writes may race where the values are equal",
                super::terms::MAX_DATA_NODES
            ));
        }
        let threads: Vec<ThreadProgram> = (0..self.n)
            .map(|t| {
                let end = match self.th[t].state {
                    State::Exited => ThreadEnd::Exited,
                    State::Trapped(pc) => ThreadEnd::Trapped(InstId(pc)),
                    State::Error => ThreadEnd::BarrierError,
                    State::BarWait | State::MbarWait { .. } if !stopped => ThreadEnd::Blocked,
                    _ => ThreadEnd::Stopped,
                };
                let mut commands = std::mem::take(&mut self.cmds[t]);
                commands.shrink_to_fit();
                ThreadProgram {
                    commands,
                    end,
                    steps: std::mem::take(&mut self.steps[t]),
                }
            })
            .collect();
        let commands = threads.iter().map(|t| t.commands.len() as u64).sum();
        self.drop_infeasible_copies();
        self.unfinished_at_exit();
        let path_values = self.path_values();
        let witness = self.witness_exprs();
        let alternative_witnesses = if self.choices.abandoned {
            Vec::new()
        } else {
            self.alternative_witness_exprs(self.cfg.alternative_witnesses)
        };
        // The induction's runs (the long path) need no input scan: their values are not
        // coverage, and the scan would cost each run up to a whole search budget.
        let induction = self.cfg.choices.as_ref().is_some_and(|p| p.prefer_large);
        let path_inputs = if self.choices.abandoned || induction {
            None
        } else {
            self.path_inputs()
        };
        let choices: Vec<crate::Choice> = std::mem::take(&mut self.choices.trail)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        if choices.iter().any(|c| c.variable.expr.mentions_input()) {
            self.notes.push(super::inputs::INPUTS_NOTE.to_owned());
        }
        let mut program = Program::new(self.shape, WARP_SIZE, threads)
            .map_err(|e| Error::InvalidConfig(e.to_string()))?;
        program.values = std::mem::take(&mut self.values);
        let mut symbolic: Vec<u16> = self.term_value_ids.values().copied().collect();
        symbolic.sort_unstable();
        program.symbolic_values = symbolic;
        program.asyncs = AsyncOps {
            copies: std::mem::take(&mut self.copies),
            proxy_fences: if self.proxy_fences.iter().any(|f| !f.is_empty()) {
                std::mem::take(&mut self.proxy_fences)
            } else {
                Vec::new()
            },
            joint_done: std::mem::take(&mut self.joint_done),
            exclusive: std::mem::take(&mut self.exclusive),
        };
        Ok(Emulation {
            program,
            sources: self.ir.sources.clone(),
            shared: self.ir.shared.clone(),
            unverifiable: self.unverifiable,
            findings: self.findings,
            assumptions: self.assumptions,
            failed_assertions: self.failed_assertions,
            notes: self.notes,
            stats: Stats {
                instructions: self.instructions,
                commands,
                seconds: 0.0,
                resumed: self.resumed,
            },
            choices,
            path_values,
            abandoned: self.choices.abandoned,
            witness,
            alternative_witnesses,
            path_inputs,
            not_explored: std::mem::take(&mut self.choices.not_explored),
            search_work: self.choices.search,
            search_exhausted: self.choices.search_exhausted,
            peeks: self.peeks,
            data_forks: self.data_forks,
        })
    }
}
