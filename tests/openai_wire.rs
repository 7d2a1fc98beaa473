//! `passk run --api openai` end to end: the real binary against the stub's `/v1` over loopback,
//! plain and streamed, with the refusals, faults, resume rules, several servers and parallelism
//! that the native wire has.

use crate::util::{self, Stub, load, output, passk, run_args};
use passk::runner::record::Outcome;
use passk::wire::chat::ApiKind;
use passk::wire::outcome::CallOutcome;
use passk_stub::{Behaviour, FaultRates, ModelSpec};

/// `passk run --api openai` against `stub`; asserts exit 0 and reads the run back.
fn run_openai(
    stub: &Stub,
    out: &std::path::Path,
    models: &str,
    extra: &str,
) -> passk::analysis::Run {
    let extra = format!("--api openai {extra}");
    let (code, _, stderr) = output(passk().args(run_args(stub, out, models, &extra)));
    assert_eq!(code, 0, "{stderr}");
    load(out)
}

#[test]
fn an_oracle_passes_everything_over_the_openai_wire_plain_and_streamed() {
    let stub = Stub::oracles(&["oracle"]);
    for stream in ["", "--stream"] {
        let tmp = util::tempdir();
        let out = tmp.path().join("run");
        let run = run_openai(
            &stub,
            &out,
            "oracle",
            &format!("--trials 1 --suite store,router {stream}"),
        );
        assert_eq!(
            run.conversations.len(),
            util::store_conversations(),
            "{stream}"
        );
        assert_eq!(run.router.len(), util::router_messages(), "{stream}");
        assert!(
            run.conversations.iter().all(|c| c.outcome == Outcome::Pass),
            "{stream}: the oracle passes over /v1 as over /api/chat"
        );
        assert!(run.router.iter().all(|r| r.correct), "{stream}");
        assert!(run.conversations.iter().all(|c| c.api == ApiKind::OpenAi));
        assert!(run.router.iter().all(|r| r.api == ApiKind::OpenAi));
        assert_eq!(run.manifest.backend, "openai");
        let model = &run.manifest.models[0];
        assert!(
            model.digest.is_some() && model.warmup.is_some(),
            "{model:?}"
        );
        // Ollama's /v1 gives token counts and no durations: absent, never 0.
        let calls: Vec<_> = run.conversations.iter().flat_map(|c| &c.calls).collect();
        assert!(calls.iter().all(|k| k.timings.eval_count.is_some()));
        assert!(
            calls
                .iter()
                .all(|k| k.timings.total_duration.is_none() && k.timings.eval_duration.is_none())
        );
        if stream == "--stream" {
            assert!(
                calls.iter().all(|k| k.ttfb_s.is_some()),
                "streamed: time to headers"
            );
            assert!(
                calls.iter().any(|k| k.ttft_s.is_some()),
                "streamed: time to a token"
            );
        }
    }
}

#[test]
fn a_missing_model_and_a_model_without_tools_are_refused_before_any_trace() {
    let stub = Stub::start(
        vec![(
            "no-tools",
            ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion"]),
        )],
        |_| {},
    );
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "nosuch:1b", "--api openai --suite store");
    let (code, _, stderr) = output(passk().args(args));
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("nosuch:1b"), "{stderr}");
    let args = run_args(&stub, &out, "no-tools", "--api openai --suite store");
    let (code, _, stderr) = output(passk().args(args));
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("does not support tools"), "{stderr}");
    assert!(!out.join("conversations.jsonl").exists(), "no trace");
}

#[test]
fn a_resume_over_the_other_api_is_refused() {
    let stub = Stub::oracles(&["oracle"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 1 --suite store --tasks L1";
    run_openai(&stub, &out, "oracle", flags);
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle", flags)));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("api"), "{stderr}");
}

#[test]
fn faults_over_the_openai_wire_land_in_the_wire_buckets_and_none_is_hidden() {
    let faulty = ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
        reset: 0.03,
        http500: 0.03,
        stream_error: 0.03,
        ..FaultRates::default()
    });
    let stub = Stub::start(vec![("faulty", faulty)], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_openai(
        &stub,
        &out,
        "faulty",
        "--trials 2 --suite store --stream --retries 1",
    );
    let calls = run
        .conversations
        .iter()
        .flat_map(|c| &c.calls)
        .chain(run.manifest.models.iter().filter_map(|m| m.warmup.as_ref()));
    let failed = calls
        .flat_map(|k| &k.attempts)
        .filter(|a| a.outcome != CallOutcome::Ok)
        .count() as u64;
    let injected = stub.injected().values().sum::<u64>();
    assert!(injected > 0, "the rates must inject some faults");
    assert_eq!(
        failed, injected,
        "every injected fault is a failed attempt on record"
    );
    assert!(
        run.conversations
            .iter()
            .filter(|c| c.outcome.is_graded())
            .all(|c| c.outcome == Outcome::Pass),
        "a fault never lands in the model's bucket"
    );
}

#[test]
fn several_servers_in_parallel_share_the_trials_over_the_openai_wire() {
    let (a, b) = (Stub::oracles(&["oracle"]), Stub::oracles(&["oracle"]));
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--host {} --parallel 3 --trials 2 --suite store", b.host());
    let run = run_openai(&a, &out, "oracle", &extra);
    assert_eq!(run.conversations.len(), 2 * util::store_conversations());
    assert!(run.conversations.iter().all(|c| c.outcome == Outcome::Pass));
    assert_eq!(run.manifest.servers.len(), 2, "{:?}", run.manifest.servers);
}
