//! Tool documentation and prompt variants as files: a researcher's own
//! `tasks/store/tools/<name>.json`, checked against the tool table at load, and
//! `tasks/store/prompts/<name>.md`, crossed with each other and the router in factorial runs
//! through the binary, their digests in the manifest and on each record, and named by compare.

use crate::util::{Stub, copy_data, load, output, passk, run_args, tempdir};
use serde_json::{Value, json};
use std::path::Path;

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

/// `documented.json` with `edit` applied, written as `tasks/store/tools/<name>.json` under `root`.
fn write_variant(root: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let tools = root.join("tasks/store/tools");
    let mut docs = read(&tools.join("documented.json"));
    edit(&mut docs);
    let path = tools.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&docs).expect("json")).expect("write");
    path
}

/// A third variant: one parameter described better, and the tools in another order.
fn better_order_id(docs: &mut Value) {
    let tools = docs["tools"].as_array_mut().expect("tools");
    let get = tools
        .iter_mut()
        .find(|t| t["name"] == "get_order")
        .expect("get_order");
    get["parameters"][0]["description"] =
        json!("The order number, digits only, exactly as the customer wrote it, e.g. \"9001\".");
    tools.reverse();
}

#[test]
fn a_third_variant_crossed_with_the_router_runs_reports_and_compares() {
    let tmp = tempdir();
    let root = tmp.path().join("data");
    copy_data(&root);
    let file = write_variant(&root, "documented-v2", better_order_id);
    let digest = passk::domain::load::sha256_hex(&std::fs::read(&file).expect("read"));
    let (code, out, err) = output(passk().args(["suite", "check", "--root"]).arg(&root));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("tool docs: bare, documented, documented-v2"),
        "{out}"
    );

    let stub = Stub::oracles(&["oracle-a"]);
    let play = |dir: &str, docs: &str| {
        let out = tmp.path().join(dir);
        let extra = format!(
            "--root {} --trials 1 --suite store --tasks L1,L2 --tool-docs {docs} --router-in-front off,on",
            root.display()
        );
        let (code, _, err) = output(passk().args(run_args(&stub, &out, "oracle-a", &extra)));
        assert_eq!(code, 0, "{err}");
        out
    };
    let crossed = play("crossed", "bare,documented-v2");
    let manifest = read(&crossed.join("manifest.json"));
    assert_eq!(
        manifest["tool_docs_digests"]["store"]["documented-v2"],
        json!(digest)
    );
    let run = load(&crossed);
    // 2 tasks x 2 variants x 2 router levels.
    assert_eq!(run.conversations.len(), 8);
    for c in &run.conversations {
        let name = c.tool_docs.expect("variant").as_str();
        let expected = manifest["tool_docs_digests"]["store"][name].as_str();
        assert_eq!(c.tool_docs_sha256.as_deref(), expected, "{name}");
    }
    let (code, _, err) = output(passk().arg("report").arg(&crossed));
    assert_eq!(code, 0, "{err}");
    let md = std::fs::read_to_string(crossed.join("report/report.md")).expect("report.md");
    assert!(md.contains("documentation (documented-v2 − bare)"), "{md}");
    assert!(md.contains("docs=documented-v2/router=on"), "{md}");

    let other = play("other", "bare,documented");
    let (code, out, err) = output(
        passk()
            .arg("compare")
            .arg(&crossed)
            .arg(&other)
            .arg("--out")
            .arg(tmp.path().join("cmp")),
    );
    assert_eq!(code, 0, "{out}{err}");
    let md = std::fs::read_to_string(tmp.path().join("cmp/compare.md")).expect("compare.md");
    assert!(md.contains("settings.tool_docs"), "{md}");
    assert!(md.contains("tool_docs_digests.store.documented-v2"), "{md}");
    assert!(md.contains("tool_docs_digests.store.documented"), "{md}");
}

/// A variant's name, the edit that makes it, and what the refusal must say.
type Refusal = (&'static str, fn(&mut Value), &'static str);

#[test]
fn a_variant_may_not_change_the_tool_table_and_each_refusal_names_file_and_field() {
    let cases: [Refusal; 5] = [
        (
            "adds-a-tool",
            |d| {
                let mut extra = d["tools"][0].clone();
                extra["name"] = json!("get_weather");
                d["tools"].as_array_mut().expect("tools").push(extra);
            },
            "adds-a-tool.json: tools[8].name: unknown tool 'get_weather'",
        ),
        (
            "drops-a-tool",
            |d| {
                d["tools"].as_array_mut().expect("tools").pop();
            },
            "drops-a-tool.json: tools: must document exactly",
        ),
        (
            "renames",
            |d| d["tools"][2]["parameters"][0]["name"] = json!("order_number"),
            "renames.json: tools[2].parameters: get_order takes (order_id)",
        ),
        (
            "retypes",
            |d| d["tools"][2]["parameters"][0]["type"] = json!("integer"),
            "unknown field `type`",
        ),
        (
            "copies-data",
            |d| {
                d["tools"][2]["parameters"][0]["description"] = json!("e.g. \"5105\"");
                d["tools"][2]["parameters"][0]["example"] = json!("5105");
            },
            "copies-data.json: tools[2].parameters[0].example: '5105' overlaps",
        ),
    ];
    for (name, edit, message) in cases {
        let dir = tempdir();
        copy_data(dir.path());
        write_variant(dir.path(), name, edit);
        let (code, _, err) = output(passk().args(["suite", "check", "--root"]).arg(dir.path()));
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(message), "{name}: {err}");
    }
    // A variant no suite file defines is refused before anything is played.
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = tempdir();
    let args = run_args(
        &stub,
        &tmp.path().join("r"),
        "oracle-a",
        "--suite store --tool-docs bare,v3",
    );
    let (code, _, err) = output(passk().args(args));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--tool-docs v3: the store suite has no tasks/store/tools/v3.json"),
        "{err}"
    );
    // Given by the experiment file, the error names the file and its key.
    let file = tmp.path().join("exp.toml");
    std::fs::write(&file, "tool-docs = [\"bare\", \"v3\"]\n").expect("exp.toml");
    let args = run_args(&stub, &tmp.path().join("r2"), "oracle-a", "--suite store");
    let (code, _, err) = output(passk().args(args).arg("--config").arg(&file));
    assert_eq!(code, 2, "{err}");
    let named = format!(
        "{}: key `tool-docs` v3: the store suite has no",
        file.display()
    );
    assert!(err.contains(&named), "{err}");
}

/// A second prompt: the store's policy with one rule stated more firmly, as
/// `tasks/store/prompts/strict.md` under `root`.
fn write_prompt(root: &Path) -> std::path::PathBuf {
    let policy = std::fs::read_to_string(root.join("tasks/store/policy.md")).expect("policy");
    let dir = root.join("tasks/store/prompts");
    std::fs::create_dir_all(&dir).expect("prompts");
    let path = dir.join("strict.md");
    let text = format!("{policy}\nLook every order up before you say anything about it.\n");
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_second_prompt_crossed_with_a_third_docs_variant_runs_reports_and_compares() {
    let tmp = tempdir();
    let root = tmp.path().join("data");
    copy_data(&root);
    write_variant(&root, "documented-v2", better_order_id);
    let prompt = write_prompt(&root);
    let digest = passk::domain::load::sha256_hex(&std::fs::read(&prompt).expect("read"));
    let (code, out, err) = output(passk().args(["suite", "check", "--root"]).arg(&root));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("; prompts: policy, strict"), "{out}");

    // The prompt factor comes from the experiment file, the docs factor from the flags.
    let config = tmp.path().join("exp.toml");
    std::fs::write(&config, "prompt = [\"policy\", \"strict\"]\n").expect("config");
    let stub = Stub::oracles(&["oracle-a"]);
    let play = |dir: &str, extra: &str| {
        let out = tmp.path().join(dir);
        let extra = format!(
            "--root {} --trials 1 --suite store --tasks L1,L2 {extra}",
            root.display()
        );
        let (code, _, err) = output(passk().args(run_args(&stub, &out, "oracle-a", &extra)));
        assert_eq!(code, 0, "{err}");
        out
    };
    let crossed = play(
        "crossed",
        &format!(
            "--config {} --tool-docs documented,documented-v2",
            config.display()
        ),
    );
    let manifest = read(&crossed.join("manifest.json"));
    assert_eq!(manifest["settings"]["prompt"], json!(["policy", "strict"]));
    assert_eq!(manifest["prompt_digests"]["store"]["strict"], json!(digest));
    let run = load(&crossed);
    // 2 tasks x 2 prompts x 2 docs variants.
    assert_eq!(run.conversations.len(), 8);
    let strict: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.prompt.is_some_and(|p| p.as_str() == "strict"))
        .collect();
    assert_eq!(strict.len(), 4);
    for c in &run.conversations {
        let expected = c.prompt.map(|_| digest.as_str());
        assert_eq!(c.prompt_sha256.as_deref(), expected);
        let system = c.transcript[0].to_value()["content"]
            .as_str()
            .expect("system prompt")
            .to_string();
        assert_eq!(system.contains("Look every order up"), expected.is_some());
    }
    let (code, _, err) = output(passk().arg("report").arg(&crossed));
    assert_eq!(code, 0, "{err}");
    let md = std::fs::read_to_string(crossed.join("report/report.md")).expect("report.md");
    let md = md.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(md.contains("| prompt (strict − policy) | 0.0 pp ["), "{md}");
    assert!(
        md.contains("documentation (documented-v2 − documented)"),
        "{md}"
    );
    assert!(
        md.contains("docs × prompt (difference-in-differences)"),
        "{md}"
    );
    assert!(
        md.contains("| prompt=strict/docs=documented-v2/router=off |"),
        "{md}"
    );

    let policy_only = play("policy", "--tool-docs documented");
    let manifest = read(&policy_only.join("manifest.json"));
    assert!(manifest["settings"].get("prompt").is_none(), "{manifest}");
    assert!(manifest.get("prompt_digests").is_none(), "{manifest}");
    assert!(
        load(&policy_only)
            .conversations
            .iter()
            .all(|c| c.prompt.is_none())
    );
    let (code, out, err) = output(
        passk()
            .arg("compare")
            .arg(&crossed)
            .arg(&policy_only)
            .arg("--out")
            .arg(tmp.path().join("cmp")),
    );
    assert_eq!(code, 0, "{out}{err}");
    let md = std::fs::read_to_string(tmp.path().join("cmp/compare.md")).expect("compare.md");
    assert!(md.contains("settings.prompt"), "{md}");
    assert!(md.contains("\"policy\""), "{md}");
    assert!(md.contains("prompt_digests.store.strict"), "{md}");

    // A prompt no suite file defines is refused before anything is played, naming those that
    // exist.
    let (code, _, err) = output(passk().args(run_args(
        &stub,
        &tmp.path().join("r"),
        "oracle-a",
        &format!(
            "--root {} --suite store --prompt policy,terse",
            root.display()
        ),
    )));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "--prompt terse: the store suite has no tasks/store/prompts/terse.md (its prompt \
             files: tasks/store/policy.md (policy), tasks/store/prompts/strict.md)"
        ),
        "{err}"
    );
}
