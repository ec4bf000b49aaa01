//! Parser, emulator, barrier graph and race check on arbitrary text, with small budgets so
//! one input runs in milliseconds: every kernel ends in a verdict or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_program::CtaShape;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = ptx_parser::parse(text) else {
        return;
    };
    for function in module.entries() {
        // The kernel's own shape when it is small, else one warp and a bit.
        let declared = function.perf.reqntid.or(function.perf.maxntid);
        let threads = match declared {
            Some([x, y, z]) if u64::from(x) * u64::from(y) * u64::from(z) <= 128 => None,
            _ => Some(CtaShape { x: 40, y: 1, z: 1 }),
        };
        let config = emulator::Config {
            threads,
            step_limit: 2_000,
            max_memory: 64 << 20,
            ..emulator::Config::default()
        };
        let Ok(emulation) = emulator::emulate(&module, function.name, &config) else {
            continue;
        };
        if !emulation.unverifiable.is_empty() {
            continue;
        }
        let analysis = barrier_graph::analyze(&emulation.program);
        if let Some(hb) = &analysis.happens_before {
            let _ = race::find_races(&emulation.program, hb, &race::Config::default());
        }
    }
});
