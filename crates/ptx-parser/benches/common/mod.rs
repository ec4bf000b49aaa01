//! Builds a multi-megabyte PTX module from the test fixtures (shared by the benchmark and
//! the `throughput` example).

const NVCC: &str = include_str!("../../tests/fixtures/nvcc_reduce.ptx");
const TRITON: &str = include_str!("../../tests/fixtures/triton_scopes.ptx");
const SM90: &str = include_str!("../../tests/fixtures/sm90_tma.ptx");

/// The text of the function whose header starts with `start`, up to its closing `}` line.
fn function_text<'a>(file: &'a str, start: &str) -> &'a str {
    let begin = file.find(start).expect("function in fixture");
    let end = file[begin..].find("\n}\n").expect("end of function") + begin + 3;
    &file[begin..end]
}

/// About `target` bytes of PTX: the three fixture kernels replicated under distinct names.
#[allow(dead_code)]
pub fn big_module(target: usize) -> String {
    let kernels = [
        (
            function_text(NVCC, ".visible .entry _Z6reducePKfPfi"),
            "_Z6reducePKfPfi",
        ),
        (
            function_text(TRITON, ".visible .entry matmul_kernel"),
            "matmul_kernel",
        ),
        (
            function_text(SM90, ".visible .entry _Z8tma_copy"),
            "_Z8tma_copyPK14CUtensorMap_st",
        ),
    ];
    let mut out = String::with_capacity(target + 4096);
    out.push_str(".version 8.7\n.target sm_90a\n.address_size 64\n\n");
    out.push_str(".extern .shared .align 16 .b8 global_smem[];\n");
    out.push_str(".shared .align 8 .b64 _ZZ8tma_copyE3bar[2];\n\n");
    let mut i = 0usize;
    while out.len() < target {
        let (text, name) = kernels[i % kernels.len()];
        out.push_str(&text.replace(name, &format!("{name}_{i}")));
        out.push('\n');
        i += 1;
    }
    out
}
