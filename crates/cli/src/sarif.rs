//! `--format sarif`: a SARIF 2.1.0 log with one run.
//!
//! One rule per violation kind that occurs (rule id = the kind), plus `unverifiable`. Each
//! result's primary location is the CUDA file and line when `.loc` gives one (else the PTX
//! line); `relatedLocations` hold the other locations involved and the PTX lines.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::report::{self, KernelReport, Kind, Location, RunReport};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn rule_description(kind: Kind) -> &'static str {
    use barrier_graph::ViolationKind as V;
    match kind {
        Kind::Deadlock => "Some execution blocks forever on a barrier.",
        Kind::Sync(V::BarrierCountMismatch) => {
            "Operations of one barrier generation disagree on the count."
        }
        Kind::Sync(V::BarrierOverflow) => {
            "More threads registered on a barrier generation than its count."
        }
        Kind::Sync(V::NoWaiter) => {
            "A barrier generation completes with arrivals only; nobody waits."
        }
        Kind::Sync(V::UnsafeRecycling) => {
            "A barrier generation is not ordered after the previous generation of the same \
             barrier, so different executions synchronize different operations."
        }
        Kind::Sync(V::InvalidBarrierId) => "A barrier id outside 0-15.",
        Kind::Sync(V::InvalidThreadCount) => {
            "A barrier thread count that is zero, not a multiple of the warp size, or larger \
             than the CTA."
        }
        Kind::Sync(V::BarrierDivergence) => {
            "Lanes of one warp execute different aligned barrier instructions."
        }
        Kind::Sync(
            V::MbarrierUninitialized
            | V::MbarrierInvalidCount
            | V::MbarrierOverflow
            | V::MbarrierReinit
            | V::MbarrierPhaseRace,
        ) => "An mbarrier protocol error.",
        Kind::Sync(V::MbarrierReused) => {
            "A load, store or copy of a live mbarrier object's memory (after its mbarrier.init, \
             before its mbarrier.inval)."
        }
        Kind::Sync(V::Deadlock) => "Some execution blocks forever on a barrier.",
        Kind::BenignRace => {
            "Two unordered plain writes store the same known value to the same bytes (a \
             warning; a violation with --strict)."
        }
        Kind::Race => "Two unordered accesses to the same shared byte, at least one a write.",
        Kind::MissingProxyFence => {
            "A generic-proxy shared-memory write read by a bulk or TMA copy or a tensor-core \
             operand read (async proxy) without fence.proxy.async between them."
        }
        Kind::SharedOutOfBounds => "A shared-memory access outside the CTA's shared window.",
        Kind::MisalignedAddress => {
            "A shared-memory address not aligned as the PTX ISA requires: an access to a \
             multiple of its size, an mbarrier object to 8 bytes, a bulk copy's operand to 16."
        }
        Kind::TrapReachable => "A trap instruction is reachable.",
        Kind::TensorMemory => {
            "A violation of the tensor-memory rules: the allocation protocol (tcgen05.alloc/dealloc), \
             or a tcgen05.ld/st outside the lanes its warp may access."
        }
        Kind::ClusterLaunchControl => {
            "Undefined use of cluster launch control: a clusterlaunchcontrol.try_cancel after \
             the thread observed a failed request."
        }
        Kind::BulkCopySize => {
            "A bulk copy (cp.async.bulk) whose byte count is not a multiple of 16."
        }
    }
}

/// A relative URI for a path (SARIF wants `/` separators and no `./`).
fn uri(path: &str) -> String {
    let p = Path::new(path);
    let rel = match std::env::current_dir() {
        Ok(cwd) if p.is_absolute() => p.strip_prefix(&cwd).unwrap_or(p),
        _ => p,
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").map(str::to_owned).unwrap_or(s)
}

fn physical(file: &str, line: u32, column: u32) -> Value {
    let mut region = json!({ "startLine": line.max(1) });
    if column > 0 {
        region["startColumn"] = json!(column);
    }
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(file) },
            "region": region,
        }
    })
}

fn primary(loc: &Location) -> Value {
    match &loc.cuda_file {
        Some(file) => physical(file, loc.cuda_line, loc.cuda_column),
        None => physical(&loc.ptx_file, loc.ptx_line, loc.ptx_column),
    }
}

fn with_message(mut value: Value, id: usize, text: String) -> Value {
    value["id"] = json!(id);
    value["message"] = json!({ "text": text });
    value
}

/// Related locations: the other locations of the result, then every location's PTX line.
fn related(locations: &[Location]) -> Vec<Value> {
    let mut out = Vec::new();
    for loc in locations.iter().skip(1) {
        let text = if loc.label.is_empty() {
            loc.opcode.clone()
        } else {
            loc.label.clone()
        };
        out.push(with_message(primary(loc), out.len(), text));
    }
    for loc in locations {
        if loc.cuda_file.is_some() {
            let value = physical(&loc.ptx_file, loc.ptx_line, loc.ptx_column);
            let text = format!("PTX: {}", loc.opcode);
            out.push(with_message(value, out.len(), text));
        }
    }
    out
}

fn result(
    kernel: &KernelReport,
    rule: &str,
    level: &str,
    message: String,
    locations: &[Location],
) -> Value {
    let mut result = json!({
        "ruleId": rule,
        "level": level,
        "message": { "text": message },
        "locations": [],
        "properties": {
            "kernel": kernel.kernel,
            "ptxFile": kernel.file.path.display().to_string(),
        },
    });
    match locations.first() {
        Some(first) => result["locations"] = json!([primary(first)]),
        None => {
            // Nothing to point at (no CTA shape): point at the PTX file.
            result["locations"] = json!([{
                "physicalLocation": {
                    "artifactLocation": { "uri": uri(&kernel.file.path.display().to_string()) }
                }
            }]);
        }
    }
    let related = related(locations);
    if !related.is_empty() {
        result["relatedLocations"] = json!(related);
    }
    result
}

/// Builds the SARIF log.
pub fn document(run: &RunReport) -> Value {
    // Rule id → description, for the rules that occur.
    let mut kinds: BTreeMap<&'static str, &'static str> = BTreeMap::new();
    let mut results = Vec::new();
    for kernel in &run.kernels {
        for v in &kernel.violations {
            kinds.insert(v.kind.as_str(), rule_description(v.kind));
            let threads = report::describe_threads(&v.threads, weft_program::WARP_SIZE);
            let mut message = format!("{} (kernel {}", v.message, kernel.kernel);
            if !v.threads.is_empty() {
                message.push_str(&format!("; {threads}"));
            }
            message.push(')');
            let level = if v.benign { "warning" } else { "error" };
            let mut r = result(kernel, v.kind.as_str(), level, message, &v.locations);
            r["properties"]["benign"] = json!(v.benign);
            results.push(r);
        }
        if kernel.verdict != report::Verdict::Violation {
            for u in &kernel.unverifiable {
                kinds.insert(
                    "unverifiable",
                    "The kernel could not be verified: synchronization or shared addresses \
                     depend on an unknown input, or the CTA shape is unknown.",
                );
                let mut message =
                    format!("could not verify kernel {}: {}", kernel.kernel, u.reason);
                // The location gives the instruction; the register and inputs follow once.
                if let Some(register) = &u.register {
                    message.push_str(&format!("; register `{register}` holds an unknown value"));
                }
                if !u.inputs.is_empty() {
                    message.push_str(&format!("; it depends on {}", u.inputs.join(", ")));
                }
                if let Some(hint) = &u.hint {
                    message.push_str(&format!(" ({hint})"));
                }
                let locations: Vec<Location> =
                    u.location.iter().chain(&u.related).cloned().collect();
                results.push(result(
                    kernel,
                    "unverifiable",
                    "warning",
                    message,
                    &locations,
                ));
            }
        }
    }
    for error in &run.errors {
        results.push(json!({
            "ruleId": "input-error",
            "level": "error",
            "message": { "text": error.message },
            "locations": [physical(&error.file, error.line, error.column)],
        }));
        kinds.insert("input-error", "A PTX file could not be read or parsed.");
    }
    for warning in &run.warnings {
        results.push(json!({
            "ruleId": "no-kernel",
            "level": "warning",
            "message": { "text": warning.message },
            "locations": [physical(&warning.file, warning.line, warning.column)],
        }));
        kinds.insert("no-kernel", "A PTX file has no kernel (.entry) to verify.");
    }
    let rules: Vec<Value> = kinds
        .iter()
        .map(|(kind, description)| {
            json!({
                "id": kind,
                "name": kind,
                "shortDescription": { "text": description },
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "weft",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://example.invalid/weft",
                    "rules": rules,
                }
            },
            "results": results,
        }]
    })
}
