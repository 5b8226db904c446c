//! Request templates: text with placeholders filled in per request, so requests can differ
//! ("create a different handle with the same values", as in the Handle.Net study).
//!
//! Placeholders: `{seq}` a number unique to each request of the run, `{worker}` the worker
//! thread, `{rand:N}` a random integer below N, `{uuid}` a random UUID (version 4). `{{` and
//! `}}` stand for literal braces. A template is parsed once; rendering appends to a buffer
//! without allocating.

use std::io::Write;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Seq,
    Worker,
    Rand(u64),
    Uuid,
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// Per-request values for the placeholders.
pub struct Vars<'a> {
    /// The request's unique number.
    pub seq: u64,
    /// The worker thread's index.
    pub worker: usize,
    /// The session's random numbers.
    pub rng: &'a mut Rng,
}

impl Template {
    /// Parses `text`; `what` names the flag in error messages.
    pub fn parse(what: &str, text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find(['{', '}']) {
            lit.extend_from_slice(&rest.as_bytes()[..i]);
            let tail = &rest[i..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                lit.push(tail.as_bytes()[0]);
                rest = &tail[2..];
                continue;
            }
            if tail.starts_with('}') {
                return Err(format!(
                    "{what}: a lone '}}' in '{text}': write '}}}}' for a brace"
                ));
            }
            let end = tail.find('}').ok_or_else(|| {
                format!("{what}: '{{' without '}}' in '{text}': write '{{{{' for a brace")
            })?;
            let name = &tail[1..end];
            let part = match name {
                "seq" => Part::Seq,
                "worker" => Part::Worker,
                "uuid" => Part::Uuid,
                _ => match name.strip_prefix("rand:").map(str::parse::<u64>) {
                    Some(Ok(n)) if n > 0 => Part::Rand(n),
                    _ => {
                        return Err(format!(
                            "{what}: unknown placeholder '{{{name}}}': use {{seq}}, {{worker}}, {{rand:N}} or {{uuid}}"
                        ))
                    }
                },
            };
            if !lit.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut lit)));
            }
            parts.push(part);
            rest = &tail[end + 1..];
        }
        lit.extend_from_slice(rest.as_bytes());
        if !lit.is_empty() {
            parts.push(Part::Literal(lit));
        }
        Ok(Template { parts })
    }

    /// A template of fixed bytes.
    pub fn literal(bytes: &[u8]) -> Template {
        Template {
            parts: vec![Part::Literal(bytes.to_vec())],
        }
    }

    /// True when the template has no placeholders.
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// Appends the rendered template to `out`.
    pub fn render(&self, vars: &mut Vars<'_>, out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Literal(b) => out.extend_from_slice(b),
                Part::Seq => {
                    let _ = write!(out, "{}", vars.seq);
                }
                Part::Worker => {
                    let _ = write!(out, "{}", vars.worker);
                }
                Part::Rand(n) => {
                    let _ = write!(out, "{}", vars.rng.next_u64() % n);
                }
                Part::Uuid => {
                    let (a, b) = (vars.rng.next_u64(), vars.rng.next_u64());
                    // Version 4, variant 10xx (RFC 9562).
                    let a = (a & !0xf000) | 0x4000;
                    let b = (b & !(0xc << 60)) | (0x8 << 60);
                    let _ = write!(
                        out,
                        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                        a >> 32,
                        (a >> 16) & 0xffff,
                        a & 0xffff,
                        b >> 48,
                        b & 0xffff_ffff_ffff
                    );
                }
            }
        }
    }
}

/// A small fast random number generator (xorshift64*), one per session: good enough to vary
/// keys, not for secrets.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from the kernel's random numbers.
    pub fn new() -> Rng {
        let mut b = [0u8; 8];
        // SAFETY: getrandom writes at most 8 bytes into the 8-byte buffer.
        let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
        let seed = if n == 8 {
            u64::from_ne_bytes(b)
        } else {
            0x9e37_79b9_7f4a_7c15
        };
        Rng(seed | 1)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

impl Default for Rng {
    fn default() -> Self {
        Rng::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &str, seq: u64) -> String {
        let mut rng = Rng::new();
        let mut out = Vec::new();
        let mut vars = Vars {
            seq,
            worker: 3,
            rng: &mut rng,
        };
        Template::parse("--x", t)
            .unwrap()
            .render(&mut vars, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fills_placeholders() {
        assert_eq!(render("/handles/{seq}?w={worker}", 42), "/handles/42?w=3");
        assert_eq!(render("{{literal}}", 0), "{literal}");
        let r: u64 = render("{rand:10}", 0).parse().unwrap();
        assert!(r < 10);
        let u = render("{uuid}", 0);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "{u}");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
        assert!(Template::parse("--x", "/plain").unwrap().is_literal());
    }

    #[test]
    fn rejects_bad_templates() {
        for bad in ["{nope}", "{seq", "a}b", "{rand:0}", "{rand:x}"] {
            let e = Template::parse("--body", bad).expect_err(bad);
            assert!(e.starts_with("--body"), "{e}");
        }
    }
}
