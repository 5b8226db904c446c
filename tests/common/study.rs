//! Checks of a `wirebench study --out DIR` directory: study.json valid against
//! schema/study.v1.json, its document against the command's own schema and every embedded run
//! result against schema/result.v1.json; the CSV tables' rows and columns equal to the JSON's.

use serde_json::Value;
use std::path::Path;

/// A committed schema, parsed.
pub fn schema(name: &str) -> Value {
    let path = format!("{}/schema/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Panics with every error when `doc` is not valid against `schema/NAME`.
pub fn assert_valid(name: &str, doc: &Value) {
    let v = jsonschema::draft202012::new(&schema(name)).expect("a valid schema");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
}

/// Reads DIR/study.json and checks it against every schema it touches; returns it.
pub fn valid_study(dir: &Path) -> Value {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("study.json")).unwrap()).unwrap();
    assert_valid("study.v1.json", &doc);
    let document = &doc["document"];
    let (name, results): (&str, Vec<&Value>) = match doc["command"].as_str().unwrap() {
        "run" => ("sweep.v1.json", points(document)),
        "compare" => ("compare.v1.json", points(&document["sweep"])),
        _ => (
            "peak.v1.json",
            document["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| &s["result"])
                .collect(),
        ),
    };
    assert_valid(name, document);
    assert!(!results.is_empty());
    for r in results {
        assert_valid("result.v1.json", r);
    }
    doc
}

/// Every point's result of a sweep document.
fn points(sweep: &Value) -> Vec<&Value> {
    sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["result"])
        .collect()
}

/// A CSV file's rows (the files wirebench writes quote nothing in these tables' cells but
/// verdicts, which this does not read).
pub fn csv(dir: &Path, name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(text.ends_with("\r\n"), "{name}: CRLF line ends");
    text.split_terminator("\r\n")
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// The mean over the kept runs of `field` (a JSON pointer into each result) of `target` at
/// the point whose first swept value is `value` (any point without a sweep).
fn mean(sweep: &Value, target: &str, value: Option<&str>, field: &str) -> f64 {
    let flag = sweep["axes"][0]["flag"].as_str();
    let xs: Vec<f64> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["target"] == target && !p["discarded"].as_bool().unwrap())
        .filter(|p| match (flag, value) {
            (Some(f), Some(v)) => p["values"][f] == v,
            _ => true,
        })
        .map(|p| p["result"].pointer(field).unwrap().as_f64().unwrap())
        .collect();
    assert!(!xs.is_empty(), "no runs of {target} at {value:?}");
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// ops_per_s.csv and p50_us.csv of a one-axis (or no-axis) sweep: the header row is the swept
/// values, the first column the targets, and every cell the mean of the JSON's kept runs.
pub fn assert_csv_matches(dir: &Path, sweep: &Value) {
    for (file, field) in [
        ("ops_per_s.csv", "/throughput/messages_per_s"),
        ("p50_us.csv", "/latency/p50_us"),
    ] {
        let rows = csv(dir, file);
        let values: Vec<String> = match sweep["axes"][0]["values"].as_array() {
            Some(v) => v.iter().map(|x| x.as_str().unwrap().to_string()).collect(),
            None => vec!["result".into()],
        };
        assert_eq!(rows[0][0], "target", "{file}");
        assert_eq!(
            rows[0][1..],
            values[..],
            "{file}: the columns are the swept values"
        );
        let targets: Vec<&str> = sweep["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let names: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, targets, "{file}: a row per target");
        for row in &rows[1..] {
            for (cell, value) in row[1..].iter().zip(&values) {
                let axis = sweep["axes"][0].is_object().then_some(value.as_str());
                let want = mean(sweep, &row[0], axis, field);
                let got: f64 = cell.parse().unwrap();
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{file} {} {value}: {got} vs {want}",
                    row[0]
                );
            }
        }
    }
}
