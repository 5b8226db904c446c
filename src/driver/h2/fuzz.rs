//! The HTTP/2 request checks driven with arbitrary requests, for the fuzz target `h2_request`
//! (fuzz/). Not part of the API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a fuzzing harness, not run by wirebench: its set-up failing is a finding too"
)]

use super::request::Shapes;
use crate::driver::http::spec::{Accept, Body, HttpRequest, HttpSpec};
use crate::driver::http::template::{Rng, Template, Vars};

/// Checks a request (method, `Host`, path, header lines and body as the user wrote them) as
/// an HTTP/2 run does before it starts; one that passes must render for any `{seq}`. Returns
/// whether it passed; panics if an invariant breaks.
pub fn request(method: &str, host: &str, path: &str, headers: &[&str], body: Option<&str>) -> bool {
    let Ok(path) = Template::parse("URL", path) else {
        return false;
    };
    let Ok(headers) = headers.iter().map(|h| Template::parse("-H", h)).collect() else {
        return false;
    };
    let body = match body.map(|b| Template::parse("--body", b)).transpose() {
        Ok(b) => b.map(Body::Template),
        Err(_) => return false,
    };
    let spec = HttpSpec {
        requests: vec![HttpRequest {
            method: method.into(),
            path,
            headers,
            has_host: false,
            body,
        }],
        host: host.into(),
        accept: Accept::parse("2xx").expect("a valid --accept"),
        keepalive: true,
        path_text: String::new(),
        http2: true,
        http3: false,
        seed: 0,
        mix: None,
        files: None,
    };
    let mut checked = false;
    for https in [false, true] {
        let Ok(shapes) = Shapes::new(&spec, https) else {
            continue;
        };
        let (mut rng, mut scratch) = (Rng::new(), Vec::new());
        for seq in [0, 1, u64::MAX] {
            let mut vars = Vars {
                seq,
                worker: 3,
                rng: &mut rng,
            };
            let rendered = shapes.render(&mut vars, &mut scratch);
            assert!(rendered.is_some(), "a checked request did not render");
        }
        checked = true;
    }
    checked
}

/// Frames as a server sends them, fed to the client's protocol state `piece` bytes at a time
/// with `streams` requests open (see the fuzz target `h2_response`); returns how many requests
/// ended; panics if a bound or an invariant breaks.
pub fn responses(wire: &[u8], piece: usize, streams: usize) -> usize {
    super::framing::fuzz::responses(wire, piece, streams)
}
