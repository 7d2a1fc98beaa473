//! What a conversation suite shows the model: its policy (the system prompt) and its tool
//! documentation in both variants, as Ollama tool JSON, with the digests the manifest records.
//! The store and triage suites load it the same way; they differ only in their tool table, in how
//! a documentation file must list the tools, and in the data an example must stay clear of
//! ([`DocsRules`]). Every error names the file and the key at fault.

use crate::domain::load::{invalid, read_json, read_text};
use crate::domain::tool_docs::{ParamDoc, ToolDoc, ToolDocs};
use crate::domain::{PromptVariant, SuiteDigests, SuiteError, ToolVariant};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A suite's tools and their parameters, as its environment implements them.
pub type ToolTable = [(&'static str, &'static [&'static str])];

/// How a documentation file must list the suite's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolOrder {
    /// Every tool of the table once, in any order; a tool not in the table is named by its index.
    Any,
    /// Exactly the table's tools, in the table's order.
    Table,
}

/// The values of a suite's data that a documented example must not overlap, so that copying an
/// example is never a correct call.
#[derive(Debug, Clone)]
pub struct DataValues {
    /// How an error names the data (`store data`, `the suite's data`).
    label: &'static str,
    /// The values, lower-cased.
    values: Vec<String>,
    /// The shortest value that may not stand inside an example (shorter ones only may not contain
    /// it).
    min_inside: usize,
}

impl DataValues {
    /// The values (compared case-insensitively) under `label`; a value shorter than `min_inside`
    /// only counts when it contains the whole example.
    pub fn new(
        label: &'static str,
        min_inside: usize,
        values: impl IntoIterator<Item = String>,
    ) -> DataValues {
        DataValues {
            label,
            values: values.into_iter().map(|v| v.to_lowercase()).collect(),
            min_inside,
        }
    }

    /// The first value that overlaps `example`.
    fn overlap(&self, example: &str) -> Option<&str> {
        let lower = example.to_lowercase();
        self.values
            .iter()
            .find(|s| s.contains(&lower) || (s.len() >= self.min_inside && lower.contains(*s)))
            .map(String::as_str)
    }
}

/// What a suite's tool documentation files are checked against.
#[derive(Debug, Clone)]
pub struct DocsRules<'a> {
    /// The tools the environment implements.
    pub tools: &'a ToolTable,
    /// How a file must list them.
    pub order: ToolOrder,
    /// What documented examples must stay clear of.
    pub data: DataValues,
}

/// One documentation variant, as read and as the model is shown it.
#[derive(Debug, Clone)]
struct Variant {
    docs: ToolDocs,
    ollama: Vec<Value>,
    digest: String,
}

/// Policy and tool documentation of a suite, every variant, loaded and checked.
#[derive(Debug, Clone)]
pub struct Presentation {
    /// Each prompt variant's text and SHA-256, by name (`policy` first: the suite's policy file).
    prompts: BTreeMap<PromptVariant, (String, String)>,
    variants: BTreeMap<ToolVariant, Variant>,
}

impl Presentation {
    /// Reads the policy at `policy` (prompt variant `policy`), every `<name>.md` in the
    /// `prompts` folder beside it (variant `<name>`; the folder is optional) and every
    /// `<name>.json` in `tools_dir` (`bare.json` and
    /// `documented.json` first, then the others by name), checking each documentation file against
    /// `rules`: the same tools and parameters as the table, whatever the descriptions, examples and
    /// (where the rules allow) the order.
    pub fn load(
        policy: &Path,
        tools_dir: &Path,
        rules: &DocsRules<'_>,
    ) -> Result<Presentation, SuiteError> {
        let prompts = read_prompts(policy)?;
        let mut variants = BTreeMap::new();
        for (variant, path) in variant_files(tools_dir)? {
            let (docs, file): (ToolDocs, _) = read_json(&path)?;
            check_docs(&path, &docs, variant, rules)?;
            let ollama = docs.to_ollama();
            variants.insert(
                variant,
                Variant {
                    ollama,
                    docs,
                    digest: file.digest,
                },
            );
        }
        Ok(Presentation { variants, prompts })
    }

    /// A presentation of variants built elsewhere (a suite whose tools a server lists): the
    /// prompts are read beside `policy` as [`Presentation::load`] reads them; each variant comes
    /// with its documentation, its tools in Ollama's shape and its SHA-256.
    pub fn assemble(
        policy: &Path,
        variants: Vec<(ToolVariant, ToolDocs, Vec<Value>, String)>,
    ) -> Result<Presentation, SuiteError> {
        let variants = variants
            .into_iter()
            .map(|(v, docs, ollama, digest)| {
                (
                    v,
                    Variant {
                        docs,
                        ollama,
                        digest,
                    },
                )
            })
            .collect();
        Ok(Presentation {
            prompts: read_prompts(policy)?,
            variants,
        })
    }

    /// The documentation variants the suite has, by name.
    pub fn variants(&self) -> Vec<ToolVariant> {
        self.variants.keys().copied().collect()
    }

    /// The prompt variants the suite has, by name.
    pub fn prompts(&self) -> Vec<PromptVariant> {
        self.prompts.keys().copied().collect()
    }

    /// A prompt variant's text: the system prompt (empty for a variant the suite lacks).
    pub fn system_prompt(&self, prompt: PromptVariant) -> &str {
        self.prompts.get(&prompt).map_or("", |p| p.0.as_str())
    }

    /// The SHA-256 of a prompt variant's file (empty for a variant the suite lacks).
    pub fn prompt_digest(&self, prompt: PromptVariant) -> &str {
        self.prompts.get(&prompt).map_or("", |p| p.1.as_str())
    }

    /// Tool documentation of a variant (`None`: the suite has no such file).
    pub fn docs(&self, variant: ToolVariant) -> Option<&ToolDocs> {
        self.variants.get(&variant).map(|v| &v.docs)
    }

    /// Tool schemas of a variant in Ollama's `tools` shape (empty for a variant the suite lacks,
    /// which a run refuses before it starts).
    pub fn tools(&self, variant: ToolVariant) -> &[Value] {
        self.variants
            .get(&variant)
            .map_or(&[], |v| v.ollama.as_slice())
    }

    /// The variants whose tool docs show an example value.
    pub fn variants_with_examples(&self) -> Vec<String> {
        self.variants
            .iter()
            .filter(|(_, v)| {
                v.docs
                    .tools
                    .iter()
                    .flat_map(|t| &t.parameters)
                    .any(|p| p.example.is_some())
            })
            .map(|(k, _)| k.as_str().to_string())
            .collect()
    }

    /// The example values every variant documents, as (parameter name, example): the documented
    /// variant's first, then each other variant's that are new, by variant name.
    pub fn example_values(&self) -> Vec<(String, String)> {
        let order = [ToolVariant::DOCUMENTED].into_iter().chain(
            self.variants
                .keys()
                .copied()
                .filter(|v| *v != ToolVariant::DOCUMENTED),
        );
        let mut out: Vec<(String, String)> = Vec::new();
        for v in order.filter_map(|v| self.variants.get(&v)) {
            for p in v.docs.tools.iter().flat_map(|t| &t.parameters) {
                let Some(e) = &p.example else { continue };
                if !out.iter().any(|(n, x)| n == &p.name && x == e) {
                    out.push((p.name.clone(), e.clone()));
                }
            }
        }
        out
    }

    /// The SHA-256 of each variant's file, by variant name.
    pub fn tool_docs_digests(&self) -> BTreeMap<String, String> {
        self.variants
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.digest.clone()))
            .collect()
    }

    /// The digests of the non-grader parts for a variant, with the suite's task files' digest.
    pub fn digests(&self, variant: ToolVariant, tasks_digest: &str) -> SuiteDigests {
        SuiteDigests {
            tasks: tasks_digest.to_string(),
            tools: self
                .variants
                .get(&variant)
                .map(|v| v.digest.clone())
                .unwrap_or_default(),
            policy: self.prompt_digest(PromptVariant::POLICY).to_string(),
        }
    }
}

/// Every prompt variant's text and SHA-256 (see [`prompt_files`]).
fn read_prompts(policy: &Path) -> Result<BTreeMap<PromptVariant, (String, String)>, SuiteError> {
    prompt_files(policy)?
        .into_iter()
        .map(|(name, path)| read_text(&path).map(|f| (name, (f.text, f.digest))))
        .collect()
}

/// Every `<name>.json` in `dir` as a tool docs variant, by name (none when there is no such
/// folder); a name that cannot be a variant is refused with its file.
pub fn docs_files(dir: &Path) -> Result<Vec<(ToolVariant, PathBuf)>, SuiteError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    named_files(dir, "json")?
        .into_iter()
        .map(|(stem, path)| match ToolVariant::named(&stem) {
            Ok(v) => Ok((v, path)),
            Err(m) => Err(invalid(&path, "(file name)", m)),
        })
        .collect()
}

/// The prompt variant files: `policy` (the suite's policy file), then every `prompts/<name>.md`
/// beside it by name; a name that cannot be a variant, or one that shadows `policy`, is refused
/// with its file.
fn prompt_files(policy: &Path) -> Result<Vec<(PromptVariant, PathBuf)>, SuiteError> {
    let dir = policy.parent().unwrap_or(Path::new(".")).join("prompts");
    let mut files = vec![(PromptVariant::POLICY, policy.to_path_buf())];
    if !dir.is_dir() {
        return Ok(files);
    }
    for (stem, path) in named_files(&dir, "md")? {
        let name = PromptVariant::named(&stem).map_err(|m| invalid(&path, "(file name)", m))?;
        if name.is_policy() {
            return Err(invalid(
                &path,
                "(file name)",
                "'policy' is the suite's policy file; name the variant otherwise",
            ));
        }
        files.push((name, path));
    }
    Ok(files)
}

/// The `<stem>.<ext>` files in `dir`, as (stem, path), by stem.
fn named_files(dir: &Path, ext: &str) -> Result<BTreeMap<String, PathBuf>, SuiteError> {
    let io = |source| SuiteError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == ext)
            && let Some(stem) = path.file_stem()
        {
            out.insert(stem.to_string_lossy().into_owned(), path);
        }
    }
    Ok(out)
}

/// The variant files in `dir`: `bare.json` and `documented.json` (both required), then every other
/// `<name>.json` by name; a name that cannot be a variant is refused with its file.
fn variant_files(dir: &Path) -> Result<Vec<(ToolVariant, PathBuf)>, SuiteError> {
    let mut others = BTreeMap::new();
    for (stem, path) in named_files(dir, "json")? {
        let variant = ToolVariant::named(&stem).map_err(|m| invalid(&path, "(file name)", m))?;
        others.insert(variant, path);
    }
    let mut files = Vec::new();
    for required in [ToolVariant::BARE, ToolVariant::DOCUMENTED] {
        let path = dir.join(format!("{required}.json"));
        others.remove(&required);
        files.push((required, path));
    }
    files.extend(others);
    Ok(files)
}

/// Checks one documentation file: the tools against the table, each parameter against the
/// variant's rules, and that the bare variant describes exactly one parameter.
fn check_docs(
    path: &Path,
    docs: &ToolDocs,
    variant: ToolVariant,
    rules: &DocsRules<'_>,
) -> Result<(), SuiteError> {
    let tools = docs.tools.iter().enumerate();
    match rules.order {
        ToolOrder::Table => {
            check_listed(path, docs, rules)?;
            for (i, t) in tools {
                check_tool(path, i, t, rules.tools)?;
                check_parameters(path, i, t, variant, &rules.data)?;
            }
        }
        ToolOrder::Any => {
            for (i, t) in tools.clone() {
                check_tool(path, i, t, rules.tools)?;
            }
            check_listed(path, docs, rules)?;
            for (i, t) in tools {
                check_parameters(path, i, t, variant, &rules.data)?;
            }
        }
    }
    if variant == ToolVariant::BARE {
        let described = docs
            .tools
            .iter()
            .flat_map(|t| &t.parameters)
            .filter(|p| p.description.is_some())
            .count();
        if described != 1 {
            return Err(invalid(
                path,
                "tools",
                format!("the bare variant describes exactly one parameter, not {described}"),
            ));
        }
    }
    Ok(())
}

/// Checks the file lists the table's tools as the rules' order requires.
fn check_listed(path: &Path, docs: &ToolDocs, rules: &DocsRules<'_>) -> Result<(), SuiteError> {
    let expected: Vec<&str> = rules.tools.iter().map(|(n, _)| *n).collect();
    let mut names: Vec<&str> = docs.tools.iter().map(|t| t.name.as_str()).collect();
    let (listed, rule) = match rules.order {
        ToolOrder::Table => (names == expected, "must document, in order"),
        ToolOrder::Any => {
            let mut sorted = expected.clone();
            sorted.sort_unstable();
            names.sort_unstable();
            (names == sorted, "must document exactly")
        }
    };
    if listed {
        return Ok(());
    }
    Err(invalid(
        path,
        "tools",
        format!("{rule}: {}", expected.join(", ")),
    ))
}

/// Checks the `i`-th tool is in the table, with the table's parameters, and has a description.
fn check_tool(path: &Path, i: usize, t: &ToolDoc, table: &ToolTable) -> Result<(), SuiteError> {
    let Some((_, params)) = table.iter().find(|(n, _)| *n == t.name) else {
        return Err(invalid(
            path,
            format!("tools[{i}].name"),
            format!("unknown tool '{}'", t.name),
        ));
    };
    let got: Vec<&str> = t.parameters.iter().map(|p| p.name.as_str()).collect();
    if got != *params {
        return Err(invalid(
            path,
            format!("tools[{i}].parameters"),
            format!(
                "{} takes ({}), the file documents ({})",
                t.name,
                params.join(", "),
                got.join(", ")
            ),
        ));
    }
    if t.description.trim().is_empty() {
        return Err(invalid(
            path,
            format!("tools[{i}].description"),
            "must not be empty",
        ));
    }
    Ok(())
}

/// Checks the parameters of the `i`-th tool: no examples in the bare variant; in the documented
/// one, a description quoting an example that stays clear of the suite's data.
fn check_parameters(
    path: &Path,
    i: usize,
    t: &ToolDoc,
    variant: ToolVariant,
    data: &DataValues,
) -> Result<(), SuiteError> {
    for (j, p) in t.parameters.iter().enumerate() {
        let key = format!("tools[{i}].parameters[{j}]");
        check_parameter(path, key, p, variant, data)?;
    }
    Ok(())
}

fn check_parameter(
    path: &Path,
    key: String,
    p: &ParamDoc,
    variant: ToolVariant,
    data: &DataValues,
) -> Result<(), SuiteError> {
    let documented = variant == ToolVariant::DOCUMENTED;
    let needs_both = || {
        invalid(
            path,
            key.clone(),
            "the documented variant needs a description and an example",
        )
    };
    match (&p.description, &p.example) {
        (_, None) if documented => Err(needs_both()),
        (_, None) => Ok(()),
        (_, Some(_)) if variant == ToolVariant::BARE => Err(invalid(
            path,
            format!("{key}.example"),
            "the bare variant has no examples",
        )),
        (Some(desc), Some(ex)) => check_example(path, &key, desc, ex, data),
        (None, Some(_)) if documented => Err(needs_both()),
        (None, Some(_)) => Err(invalid(
            path,
            format!("{key}.example"),
            "an example needs a description that quotes it",
        )),
    }
}

/// An example is quoted in its description and stays clear of the suite's data.
fn check_example(
    path: &Path,
    key: &str,
    desc: &str,
    ex: &str,
    data: &DataValues,
) -> Result<(), SuiteError> {
    if !desc.contains(ex) {
        return Err(invalid(
            path,
            format!("{key}.example"),
            "the example must be quoted in the description",
        ));
    }
    match data.overlap(ex) {
        Some(hit) => Err(invalid(
            path,
            format!("{key}.example"),
            format!("'{ex}' overlaps {} '{hit}'", data.label),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [(&str, &[&str]); 2] = [("get", &["id"]), ("put", &["id", "value"])];

    fn param(name: &str, description: Option<&str>, example: Option<&str>) -> ParamDoc {
        ParamDoc {
            name: name.into(),
            description: description.map(String::from),
            example: example.map(String::from),
        }
    }

    fn tool(name: &str, parameters: Vec<ParamDoc>) -> ToolDoc {
        ToolDoc {
            name: name.into(),
            description: format!("{name} something"),
            parameters,
        }
    }

    /// A bare file documenting `names` (each with the table's parameters), one parameter described.
    fn bare(names: &[&str]) -> ToolDocs {
        let tools = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let params = TABLE.iter().find(|(t, _)| t == n).map_or(&[][..], |t| t.1);
                let ps = params
                    .iter()
                    .enumerate()
                    .map(|(j, p)| param(p, (i + j == 0).then_some("the id"), None))
                    .collect();
                tool(n, ps)
            })
            .collect();
        ToolDocs { tools }
    }

    fn documented(example: &str) -> ToolDocs {
        let p = |n: &str, ex: &str| param(n, Some(&format!("for example {ex}")), Some(ex));
        ToolDocs {
            tools: vec![
                tool("get", vec![p("id", example)]),
                tool("put", vec![p("id", "K-9"), p("value", "blue")]),
            ],
        }
    }

    fn rules(order: ToolOrder, min_inside: usize) -> DocsRules<'static> {
        DocsRules {
            tools: &TABLE,
            order,
            data: DataValues::new("the data", min_inside, ["A-17".to_string(), "x".into()]),
        }
    }

    /// The error `check_docs` gives, or `None` when it accepts the file.
    fn error(docs: &ToolDocs, variant: ToolVariant, rules: &DocsRules<'_>) -> Option<String> {
        check_docs(Path::new("t.json"), docs, variant, rules)
            .err()
            .map(|e| e.to_string())
    }

    fn refused(docs: &ToolDocs, variant: ToolVariant, rules: &DocsRules<'_>) -> String {
        error(docs, variant, rules).expect("refused")
    }

    #[test]
    fn any_order_takes_a_permutation_and_names_an_unknown_tool_by_index() {
        let any = rules(ToolOrder::Any, 4);
        assert_eq!(error(&bare(&["put", "get"]), ToolVariant::BARE, &any), None);
        let e = refused(&bare(&["get", "gte"]), ToolVariant::BARE, &any);
        assert!(e.contains("tools[1].name: unknown tool 'gte'"), "{e}");
        let e = refused(&bare(&["get", "get"]), ToolVariant::BARE, &any);
        assert!(e.contains("tools: must document exactly: get, put"), "{e}");
    }

    #[test]
    fn table_order_refuses_a_permutation_or_an_unknown_tool_as_a_whole() {
        let table = rules(ToolOrder::Table, 0);
        assert_eq!(
            error(&bare(&["get", "put"]), ToolVariant::BARE, &table),
            None
        );
        for names in [["put", "get"], ["get", "gte"]] {
            let e = refused(&bare(&names), ToolVariant::BARE, &table);
            assert!(
                e.contains("tools: must document, in order: get, put"),
                "{e}"
            );
        }
    }

    #[test]
    fn examples_stay_clear_of_the_data_by_the_suites_rule() {
        let lenient = rules(ToolOrder::Any, 4);
        let strict = rules(ToolOrder::Table, 0);
        for r in [&lenient, &strict] {
            let e = refused(&documented("a-17"), ToolVariant::DOCUMENTED, r);
            assert!(
                e.contains("tools[0].parameters[0].example: 'a-17' overlaps the data 'a-17'"),
                "{e}"
            );
        }
        // "x" is shorter than the lenient rule's minimum: it may stand inside an example.
        let docs = documented("Zx-42");
        assert_eq!(error(&docs, ToolVariant::DOCUMENTED, &lenient), None);
        let e = refused(&docs, ToolVariant::DOCUMENTED, &strict);
        assert!(e.contains("overlaps the data 'x'"), "{e}");
    }

    #[test]
    fn the_bare_variant_has_no_examples_and_one_description() {
        let any = rules(ToolOrder::Any, 4);
        let mut docs = bare(&["get", "put"]);
        docs.tools[1].parameters[1].example = Some("v".into());
        let e = refused(&docs, ToolVariant::BARE, &any);
        assert!(
            e.contains("tools[1].parameters[1].example: the bare variant has no examples"),
            "{e}"
        );
        docs.tools[1].parameters[1] = param("value", Some("what to store"), None);
        let e = refused(&docs, ToolVariant::BARE, &any);
        assert!(e.contains("describes exactly one parameter, not 2"), "{e}");
        let e = refused(&bare(&["get", "put"]), ToolVariant::DOCUMENTED, &any);
        assert!(
            e.contains("tools[0].parameters[0]: the documented variant needs a description"),
            "{e}"
        );
    }

    #[test]
    fn prompt_variants_are_the_policy_and_each_file_beside_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let policy = dir.path().join("policy.md");
        std::fs::write(&policy, "Be kind.").expect("policy");
        let names = |p: &Path| -> Result<Vec<String>, String> {
            prompt_files(p)
                .map(|f| f.into_iter().map(|(v, _)| v.to_string()).collect())
                .map_err(|e| e.to_string())
        };
        assert_eq!(names(&policy), Ok(vec!["policy".to_string()]));
        let prompts = dir.path().join("prompts");
        std::fs::create_dir(&prompts).expect("prompts");
        std::fs::write(prompts.join("strict.md"), "Be strict.").expect("strict");
        std::fs::write(prompts.join("notes.txt"), "not a prompt").expect("notes");
        assert_eq!(names(&policy), Ok(vec!["policy".into(), "strict".into()]));
        std::fs::write(prompts.join("policy.md"), "shadow").expect("shadow");
        let e = names(&policy).expect_err("shadow refused");
        assert!(
            e.contains("policy.md") && e.contains("name the variant otherwise"),
            "{e}"
        );
        std::fs::remove_file(prompts.join("policy.md")).expect("rm");
        std::fs::write(prompts.join("Loud.md"), "LOUD").expect("loud");
        let e = names(&policy).expect_err("bad name refused");
        assert!(
            e.contains("Loud.md") && e.contains("invalid prompt variant"),
            "{e}"
        );
    }

    #[test]
    fn the_real_suites_show_both_variants_with_their_own_digests() {
        let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let store = crate::suites::store::load_store(&root).expect("store");
        let triage = crate::suites::triage::load_triage(&root).expect("triage");
        for (p, tools, name) in [
            (&store.presentation, 8, "Hearth & Grain"),
            (&triage.presentation, 6, "triage"),
        ] {
            assert!(p.system_prompt(PromptVariant::POLICY).contains(name));
            assert_eq!(p.tools(ToolVariant::BARE).len(), tools);
            assert_eq!(
                p.docs(ToolVariant::DOCUMENTED)
                    .expect("documented")
                    .to_ollama(),
                p.tools(ToolVariant::DOCUMENTED)
            );
            assert!(!p.example_values().is_empty());
            let (bare, doc) = (
                p.digests(ToolVariant::BARE, "t"),
                p.digests(ToolVariant::DOCUMENTED, "t"),
            );
            assert_ne!(bare.tools, doc.tools);
            assert_eq!((bare.tasks.as_str(), &bare.policy), ("t", &doc.policy));
        }
    }
}
