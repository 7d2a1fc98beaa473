//! The retry loop every API's calls go through: bounded exponential backoff, every attempt kept,
//! and the call's outcome the last attempt's (metrics.md, "Outcomes of one model call"). An API
//! supplies one attempt at a time; what is retried is decided here, from [`Failure`].

use super::outcome::{Attempt, CallOutcome, Failure};
use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often and how patiently a call is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after a transport failure or a malformed body (0: one attempt only).
    pub retries: u32,
    /// Wait before the first retry; doubled for each further retry (capped at 64x).
    pub backoff: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `n` (0-based): `backoff * 2^min(n, 6)`.
    pub fn backoff_for(&self, n: u32) -> Duration {
        self.backoff.saturating_mul(1u32 << n.min(6))
    }
}

/// Hears of a failed attempt of a chat call as it fails: the attempt, and whether it is retried.
pub type AttemptWatch<'a> = &'a (dyn Fn(&Attempt, bool) + Sync);

/// One failed attempt, as an API reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptError {
    /// Why it failed (decides the bucket and whether it is retried).
    pub failure: Failure,
    /// HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// What went wrong, in words.
    pub message: String,
}

/// What one successful attempt brings back.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptOk<T> {
    /// The parsed answer.
    pub body: T,
    /// HTTP status.
    pub status: u16,
    /// Seconds from sending to the response headers.
    pub ttfb_s: f64,
    /// Streamed only: seconds to the first chunk carrying content.
    pub first_token_s: Option<f64>,
}

/// A call after its last attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Retried<T> {
    /// The answer of the successful attempt.
    pub body: Option<T>,
    /// Bucket of the call: the last attempt's.
    pub outcome: CallOutcome,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
    /// Wall time of the final attempt, seconds.
    pub wall_s: f64,
    /// Time to the response headers of the final attempt, when it succeeded.
    pub ttfb_s: Option<f64>,
    /// Time to the first token of the final attempt, when it succeeded streamed.
    pub first_token_s: Option<f64>,
    /// Start of the final attempt, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

/// Runs `attempt` (given the instant it starts) until it succeeds, fails for good, or the
/// retries are spent; `watch` hears of each failed attempt with whether another follows.
pub async fn with_retries<T, F, Fut>(
    policy: RetryPolicy,
    watch: Option<AttemptWatch<'_>>,
    mut attempt: F,
) -> Retried<T>
where
    F: FnMut(Instant) -> Fut,
    Fut: Future<Output = Result<AttemptOk<T>, AttemptError>>,
{
    let mut attempts = Vec::new();
    let mut n = 0u32;
    loop {
        let started_unix_ms = unix_ms();
        let t0 = Instant::now();
        let r = attempt(t0).await;
        let wall_s = t0.elapsed().as_secs_f64();
        let elapsed_ms = wall_s * 1000.0;
        let done = |outcome, body: Option<T>, attempts, ttfb_s, first_token_s| Retried {
            body,
            outcome,
            attempts,
            wall_s,
            ttfb_s,
            first_token_s,
            started_unix_ms,
        };
        match r {
            Ok(ok) => {
                attempts.push(Attempt {
                    outcome: CallOutcome::Ok,
                    status: Some(ok.status),
                    error: None,
                    elapsed_ms,
                });
                return done(
                    CallOutcome::Ok,
                    Some(ok.body),
                    attempts,
                    Some(ok.ttfb_s),
                    ok.first_token_s,
                );
            }
            Err(e) => {
                let outcome = e.failure.outcome();
                let attempt = Attempt {
                    outcome,
                    status: e.status,
                    error: Some(e.message),
                    elapsed_ms,
                };
                let last = !e.failure.retryable() || n >= policy.retries;
                if let Some(watch) = watch {
                    watch(&attempt, !last);
                }
                attempts.push(attempt);
                if last {
                    return done(outcome, None, attempts, None, None);
                }
                tokio::time::sleep(policy.backoff_for(n)).await;
                n += 1;
            }
        }
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            backoff: Duration::from_millis(1),
        }
    }

    fn fail(failure: Failure) -> Result<AttemptOk<u8>, AttemptError> {
        Err(AttemptError {
            failure,
            status: Some(503),
            message: "busy".into(),
        })
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            retries: 3,
            backoff: Duration::from_millis(10),
        };
        assert_eq!(p.backoff_for(0), Duration::from_millis(10));
        assert_eq!(p.backoff_for(2), Duration::from_millis(40));
        assert_eq!(p.backoff_for(30), Duration::from_millis(640));
    }

    #[tokio::test]
    async fn a_transport_failure_is_retried_until_the_retries_are_spent() {
        let heard = std::sync::Mutex::new(Vec::new());
        let watch = |_: &Attempt, again: bool| heard.lock().expect("lock").push(again);
        let r = with_retries(policy(2), Some(&watch), |_| async {
            fail(Failure::Transport)
        })
        .await;
        assert_eq!(r.outcome, CallOutcome::Transport);
        assert_eq!(r.attempts.len(), 3);
        assert_eq!(*heard.lock().expect("lock"), vec![true, true, false]);
    }

    #[tokio::test]
    async fn a_protocol_failure_is_final_and_a_success_ends_the_loop() {
        let r = with_retries(policy(5), None, |_| async { fail(Failure::Protocol) }).await;
        assert_eq!((r.outcome, r.attempts.len()), (CallOutcome::Protocol, 1));
        let mut n = 0;
        let r = with_retries(policy(5), None, |_| {
            n += 1;
            let first = n == 1;
            async move {
                if first {
                    fail(Failure::Malformed)
                } else {
                    Ok(AttemptOk {
                        body: 7u8,
                        status: 200,
                        ttfb_s: 0.0,
                        first_token_s: None,
                    })
                }
            }
        })
        .await;
        assert_eq!(r.body, Some(7));
        assert_eq!(r.outcome, CallOutcome::Ok);
        let buckets: Vec<_> = r.attempts.iter().map(|a| a.outcome).collect();
        assert_eq!(buckets, vec![CallOutcome::Protocol, CallOutcome::Ok]);
    }
}
