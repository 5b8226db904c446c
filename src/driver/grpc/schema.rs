//! Where a method's types come from, with no generated code: a `.proto` parsed at run time
//! (`--proto`, protox) or the server's reflection service (grpc.reflection.v1, then v1alpha),
//! asked over one HTTP/2 connection before the run; and the request message made from JSON.

use super::exchange::Exchange;
use crate::wire::grpc::{ReflectionReply, ReflectionRequest};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The method `service`/`method` in `pool`; the error lists what the pool offers.
pub fn find(
    pool: &DescriptorPool,
    service: &str,
    method: &str,
) -> Result<MethodDescriptor, String> {
    let Some(s) = pool.get_service_by_name(service) else {
        let offered: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        return Err(format!(
            "no service {service}: {}",
            offer(&offered, "services")
        ));
    };
    let found = s.methods().find(|m| m.name() == method);
    found.ok_or_else(|| {
        let offered: Vec<String> = s
            .methods()
            .map(|m| format!("{service}/{}", m.name()))
            .collect();
        format!(
            "{service} has no method {method}: {}",
            offer(&offered, "methods")
        )
    })
}

fn offer(names: &[String], what: &str) -> String {
    match names {
        [] => format!("it offers no {what}"),
        _ => format!("it offers {}", names.join(", ")),
    }
}

/// Compiles `file` with `imports` (its own directory when none is given) into a pool; a
/// syntax error is said as FILE:LINE:COL.
pub fn from_proto(file: &str, imports: &[String]) -> Result<DescriptorPool, String> {
    let path = Path::new(file);
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("--proto {file}: cannot read it ({e})"))?;
    if let Err(e) = protox_parse::parse(file, &source) {
        let at = e.span().map_or(0, |s| s.start).min(source.len());
        let before = &source[..at];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        return Err(format!("--proto {file}:{line}:{col}: {e}"));
    }
    let mut dirs: Vec<PathBuf> = imports.iter().map(PathBuf::from).collect();
    let own = path.parent().filter(|p| !p.as_os_str().is_empty());
    let own = own.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if dirs.is_empty() {
        dirs.push(own);
    }
    let mut compiler = protox::Compiler::new(&dirs).map_err(|e| format!("--proto {file}: {e}"))?;
    compiler.include_imports(true);
    compiler.open_file(path).map_err(|e| match e.file() {
        Some(f) if f != file => format!("--proto {file}: in {f}: {e} (give --import-path DIR)"),
        _ => format!("--proto {file}: {e} (give --import-path DIR for its imports)"),
    })?;
    Ok(compiler.descriptor_pool())
}

/// Asks the server's reflection service for `service`'s file and those it imports, over
/// `x`; the error says what the server answered (and that `--proto` does without).
pub async fn from_reflection(x: &mut Exchange, service: &str) -> Result<DescriptorPool, String> {
    let no_reflection = |why: String| format!("{why}; give the method's types with --proto FILE");
    // The newest reflection service the server has.
    let mut last = String::new();
    let mut path = None;
    for r in crate::wire::grpc::REFLECTION {
        let p = format!("/{r}/{}", crate::wire::grpc::REFLECTION_METHOD);
        match ask(x, &p, &ReflectionRequest::ListServices).await {
            Ok(ReflectionReply::Services(names)) => {
                if !names.iter().any(|n| n == service) {
                    return Err(format!(
                        "the server has no service {service}: {}",
                        offer(&names, "services")
                    ));
                }
                path = Some(p);
                break;
            }
            Ok(other) => last = format!("its reflection answered {other:?}"),
            Err(e) => last = e,
        }
    }
    let Some(path) = path else {
        return Err(no_reflection(format!(
            "the server does not answer gRPC reflection ({last})"
        )));
    };
    let mut files: Vec<prost_types::FileDescriptorProto> = Vec::new();
    let mut asked: BTreeSet<String> = BTreeSet::new();
    let mut want = vec![ReflectionRequest::FileContainingSymbol(service.to_string())];
    while let Some(req) = want.pop() {
        let got = match ask(x, &path, &req).await? {
            ReflectionReply::Files(f) => f,
            ReflectionReply::Error(code, message) => {
                return Err(no_reflection(format!(
                    "its reflection could not give {req:?} ({}: {message})",
                    crate::wire::grpc::status_name(code)
                )))
            }
            other => return Err(format!("its reflection answered {other:?} to {req:?}")),
        };
        for bytes in got {
            let f = prost_types::FileDescriptorProto::decode(bytes.as_slice())
                .map_err(|e| format!("its reflection sent a file that does not decode: {e}"))?;
            asked.insert(f.name().to_string());
            files.push(f);
        }
        // Imports it did not send come one by one.
        for f in &files {
            for dep in &f.dependency {
                if asked.insert(dep.clone()) {
                    want.push(ReflectionRequest::FileByName(dep.clone()));
                }
            }
        }
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(files)
        .map_err(|e| format!("the files its reflection sent do not fit together: {e}"))?;
    Ok(pool)
}

/// One reflection request and its answer.
async fn ask(
    x: &mut Exchange,
    path: &str,
    req: &ReflectionRequest,
) -> Result<ReflectionReply, String> {
    let replies = x.call(path, &req.encode()).await?;
    let first = replies
        .first()
        .ok_or_else(|| "its reflection answered nothing".to_string())?;
    ReflectionReply::decode(first).ok_or_else(|| "its reflection's answer does not decode".into())
}

/// `json` as a message of type `desc`, encoded; the error names the field and the type
/// expected, as serde reads proto3's JSON mapping.
pub fn encode(desc: &MessageDescriptor, json: &str) -> Result<Vec<u8>, String> {
    let mut de = serde_json::Deserializer::from_str(json);
    let msg = DynamicMessage::deserialize(desc.clone(), &mut de)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| {
            let field = field_at(desc, json, e.line(), e.column());
            format!("--data does not fit {}: {field}{e}", desc.full_name())
        })?;
    Ok(msg.encode_to_vec())
}

/// The field whose value the JSON error at `line`:`col` is in, with its type (`replySize
/// (uint32): `), as far as the text before it tells; empty if it does not.
fn field_at(desc: &MessageDescriptor, json: &str, line: usize, col: usize) -> String {
    let Some(text) = json.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let before = &text[..col.min(text.len())];
    let Some(colon) = before.rfind("\":") else {
        return String::new();
    };
    let Some(open) = before[..colon].rfind('"') else {
        return String::new();
    };
    let name = &before[open + 1..colon];
    let field = desc
        .get_field_by_json_name(name)
        .or_else(|| desc.get_field_by_name(name));
    match field {
        Some(f) => {
            let kind = format!("{:?}", f.kind()).to_lowercase();
            let kind = kind.split('(').next().unwrap_or_default().to_string();
            let list = if f.is_list() { "repeated " } else { "" };
            format!("{name} ({list}{kind}): ")
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_pool() -> DescriptorPool {
        let dir = std::env::temp_dir().join(format!("wb-grpc-schema-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("wirebench")).unwrap();
        let f = dir.join("wirebench/bench.proto");
        std::fs::write(&f, crate::wire::grpc::BENCH_PROTO).unwrap();
        from_proto(f.to_str().unwrap(), &[dir.to_str().unwrap().to_string()]).unwrap()
    }

    #[test]
    fn methods_and_json() {
        let pool = bench_pool();
        let m = find(&pool, "wirebench.bench.Bench", "Echo").unwrap();
        let bytes = encode(&m.input(), r#"{"payload":"aGk=","replySize":3}"#).unwrap();
        assert_eq!(bytes, [10, 2, b'h', b'i', 16, 3]);
        let e = find(&pool, "wirebench.bench.Bench", "Nope").unwrap_err();
        assert!(
            e.contains("wirebench.bench.Bench/Echo") && e.contains("Collect"),
            "{e}"
        );
        let e = find(&pool, "x.Y", "Z").unwrap_err();
        assert!(e.contains("it offers wirebench.bench.Bench"), "{e}");
        let e = encode(&m.input(), r#"{"replySize":"many"}"#).unwrap_err();
        assert!(e.contains("EchoRequest"), "{e}");
        let stream = find(&pool, "wirebench.bench.Bench", "Stream").unwrap();
        assert!(stream.is_server_streaming() && !stream.is_client_streaming());
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let f = std::env::temp_dir().join(format!("wb-bad-{}.proto", std::process::id()));
        std::fs::write(&f, "syntax = \"proto3\";\nmessage A {\n  int32 x = ;\n}\n").unwrap();
        let e = from_proto(f.to_str().unwrap(), &[]).unwrap_err();
        assert!(e.contains(&format!("{}:3:", f.display())), "{e}");
    }
}
