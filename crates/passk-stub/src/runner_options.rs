//! The options a model is loaded with, and whether a loaded model serves a request as it is: Ollama
//! v0.33's `api.Runner` (`num_ctx`, `num_batch`, `num_gpu`, `main_gpu`, `use_mmap`, `num_thread`,
//! `draft_num_predict`) as `getRunner` and `needsReload` (`server/sched.go`) settle and compare
//! them. Any difference loads the model again; the sampling options never do.

use super::STUB_CONTEXT_LENGTH;
use passk::wire::ollama::api::ChatRequest;
use serde_json::Value;

/// `api.DefaultOptions()`'s `NumBatch`.
const DEFAULT_NUM_BATCH: i64 = 512;

/// `api.DefaultOptions()`'s `DraftNumPredict`.
const DEFAULT_DRAFT_NUM_PREDICT: i64 = 4;

/// The smallest context `getRunner` lets a request ask for.
const MIN_NUM_CTX: u64 = 4;

/// A model runner's options, as a request settles them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunnerOptions {
    /// The context it runs with ([`effective_num_ctx`]).
    pub num_ctx: u64,
    /// The request named no `num_ctx` (`usesAutomaticNumCtx`).
    num_ctx_auto: bool,
    num_batch: i64,
    /// The request named no `num_batch` (`usesAutomaticNumBatch`).
    num_batch_auto: bool,
    num_gpu: i64,
    main_gpu: Option<i64>,
    use_mmap: Option<bool>,
    num_thread: i64,
    draft_num_predict: i64,
    /// Whether the runner shifts its context when a prompt does not fit (`resolveContextShift`:
    /// the request's `shift`, else on for every model but deepseek2's, which the stub has not).
    context_shift: bool,
}

/// The context a request's model runs with, as Ollama settles it: `num_ctx` as asked, at least 4
/// (`getRunner`) and at most the model's trained length (`NewLlamaServer` caps it there, and
/// `effectiveContext` compares it so), the trained length where the request names none. The
/// prompt is fitted to it (`optionsForPrompt` caps `num_ctx` at the runner's context length).
pub(crate) fn effective_num_ctx(req: &ChatRequest) -> u64 {
    req.options.num_ctx.map_or(STUB_CONTEXT_LENGTH, |n| {
        n.clamp(MIN_NUM_CTX, STUB_CONTEXT_LENGTH)
    })
}

impl RunnerOptions {
    /// The options `req` asks its model to run with, its `shift` among them, Ollama's defaults
    /// where it names none.
    pub(crate) fn of(req: &ChatRequest, shift: Option<bool>) -> RunnerOptions {
        let extra = &req.options.extra;
        // The judge has refused options of the wrong type; a number Go reads into an `int`
        // arrives here as JSON's, whole or not (`8.0`).
        let int = |key: &str| extra.get(key).and_then(Value::as_f64).map(|n| n as i64);
        RunnerOptions {
            num_ctx: effective_num_ctx(req),
            num_ctx_auto: req.options.num_ctx.is_none(),
            num_batch: int("num_batch").unwrap_or(DEFAULT_NUM_BATCH),
            num_batch_auto: int("num_batch").is_none(),
            num_gpu: int("num_gpu").unwrap_or(-1),
            main_gpu: int("main_gpu"),
            use_mmap: extra.get("use_mmap").and_then(Value::as_bool),
            num_thread: int("num_thread").unwrap_or(0),
            draft_num_predict: int("draft_num_predict").unwrap_or(DEFAULT_DRAFT_NUM_PREDICT),
            context_shift: shift.unwrap_or(true),
        }
    }

    /// Whether a model loaded with these options serves `asked` as it is (`needsReload` says
    /// no): what the request leaves automatic is taken from the runner (`num_ctx` and `num_batch`
    /// when both are automatic, `use_mmap` when the request names none), a negative `num_gpu`
    /// matches any, and another context shift reloads.
    pub(crate) fn serves(&self, asked: &RunnerOptions) -> bool {
        let mut asked = asked.clone();
        let mut loaded = self.clone();
        if loaded.num_ctx_auto && asked.num_ctx_auto {
            asked.num_ctx = loaded.num_ctx;
        }
        if loaded.num_batch_auto && asked.num_batch_auto {
            asked.num_batch = loaded.num_batch;
        }
        if asked.use_mmap.is_none() {
            asked.use_mmap = loaded.use_mmap;
        }
        if asked.num_gpu < 0 {
            (loaded.num_gpu, asked.num_gpu) = (-1, -1);
        }
        // Whether each side was automatic is how it was settled, not an option.
        (asked.num_ctx_auto, asked.num_batch_auto) = (loaded.num_ctx_auto, loaded.num_batch_auto);
        loaded == asked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asking(options: Value) -> RunnerOptions {
        let req: ChatRequest =
            serde_json::from_value(json!({"model": "m", "options": options})).expect("a request");
        RunnerOptions::of(&req, None)
    }

    #[test]
    fn num_ctx_is_at_least_4_and_at_most_the_trained_length() {
        assert_eq!(asking(json!({"num_ctx": 1})).num_ctx, 4);
        assert_eq!(asking(json!({"num_ctx": 0})).num_ctx, 4);
        assert_eq!(asking(json!({"num_ctx": 8192})).num_ctx, 8192);
        assert_eq!(
            asking(json!({"num_ctx": 131072})).num_ctx,
            STUB_CONTEXT_LENGTH
        );
        assert_eq!(asking(json!({})).num_ctx, STUB_CONTEXT_LENGTH);
    }

    #[test]
    fn a_runner_option_that_differs_reloads_and_a_sampling_option_does_not() {
        let base = asking(json!({"num_ctx": 8192}));
        // Past the trained length both are the trained length: no reload.
        assert!(asking(json!({"num_ctx": 65536})).serves(&asking(json!({"num_ctx": 131072}))));
        assert!(base.serves(&asking(
            json!({"num_ctx": 8192, "temperature": 0.1, "seed": 3})
        )));
        assert!(!base.serves(&asking(json!({"num_ctx": 4096}))));
        assert!(!base.serves(&asking(json!({"num_ctx": 8192, "num_batch": 64}))));
        // The default, named or not.
        assert!(base.serves(&asking(json!({"num_ctx": 8192, "num_batch": 512}))));
        assert!(!base.serves(&asking(json!({"num_ctx": 8192, "num_gpu": 0}))));
        assert!(base.serves(&asking(json!({"num_ctx": 8192, "num_gpu": -1}))));
        assert!(!base.serves(&asking(json!({"num_ctx": 8192, "main_gpu": 1}))));
        assert!(!base.serves(&asking(json!({"num_ctx": 8192, "num_thread": 2}))));
        assert!(!base.serves(&asking(json!({"num_ctx": 8192, "use_mmap": false}))));
        let mapped = asking(json!({"num_ctx": 8192, "use_mmap": false}));
        assert!(mapped.serves(&base), "no use_mmap asked: the runner's");
        // A runner loaded on 2 GPUs serves whoever asks for any (-1).
        let two = asking(json!({"num_ctx": 8192, "num_gpu": 2}));
        assert!(two.serves(&asking(json!({"num_ctx": 8192, "num_gpu": -1}))));
        // `needsReload` compares the context shift too.
        let req: ChatRequest = serde_json::from_value(json!({"model": "m"})).expect("a request");
        assert!(!RunnerOptions::of(&req, None).serves(&RunnerOptions::of(&req, Some(false))));
        assert!(RunnerOptions::of(&req, None).serves(&RunnerOptions::of(&req, Some(true))));
        // Automatic num_ctx on both sides: the runner's.
        assert!(asking(json!({})).serves(&asking(json!({}))));
        assert!(!asking(json!({"num_ctx": 8192})).serves(&asking(json!({}))));
    }
}
