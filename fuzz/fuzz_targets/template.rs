//! Request templates (`--body`, `-H`, the URL's path): parsed, then rendered.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wirebench::driver::http::template::{Rng, Template, Vars};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(t) = Template::parse("--body", text) else {
        return;
    };
    let mut rng = Rng::new();
    let mut out = Vec::new();
    for seq in [0, u64::MAX] {
        out.clear();
        t.render(
            &mut Vars {
                seq,
                worker: usize::MAX,
                rng: &mut rng,
            },
            &mut out,
        );
    }
    if t.is_literal() && !text.contains("{{") {
        assert_eq!(
            out,
            text.as_bytes(),
            "a template without placeholders is its text"
        );
    }
});
