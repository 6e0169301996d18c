//! The cost of one streamed text delta.
//!
//! One scripted text turn of `WORDS` words, which [`ScriptedModel`] streams as one delta per
//! word, consumed to the end. Throughput is `WORDS` elements, so criterion reports the time per
//! delta. The cases are:
//!
//! - `baseline`: the scripted model's own stream (`CompletionModel::stream`), consumed
//!   directly, aggregating the text as any consumer would; what reins adds is measured
//!   against it.
//! - `reins/hooks=0`: `agent.prompt(..).stream()` consumed to its end, no hook.
//! - `reins/hooks=1`: the same with one [`TextObserver`] hook, which implements
//!   `on_text_delta` (answering continue) and observes every kind observed by default.
//!
//! The model and the agent are built in `iter_batched`'s setup, so only the run is timed, on a
//! current-thread tokio runtime. The cost a hook adds per delta is
//! `(hooks=1 − hooks=0) / WORDS`; reins' own cost per delta is `(hooks=0 − baseline) / WORDS`.
//!
//! Before the measurements, the heap allocations of one run of each case are printed
//! (`allocations:` lines), counted by the allocator of `common`.
//!
//! Run with `cargo bench -p reins --bench streaming`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use reins::agent::{
    Agent, AgentBuilder, AgentHook, HookContext, ObservationAction, StreamItem, TextDeltaEvent,
};
use reins::completion::{CompletionModel, CompletionRequest, StreamChunk};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use std::hint::black_box;

mod common;

use common::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Words in the streamed answer, hence deltas per run.
const WORDS: usize = 1_000;

/// Observes every text delta and lets the run continue.
struct TextObserver;

impl AgentHook for TextObserver {
    async fn on_text_delta(
        &self,
        _ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        black_box(event.delta);
        ObservationAction::continue_run()
    }
}

fn answer() -> String {
    "word ".repeat(WORDS)
}

fn scripted_model(answer: &str) -> ScriptedModel {
    ScriptedModel::new([Turn::text(answer)]).without_request_log()
}

/// Consumes the model's stream directly; returns the number of deltas and the text.
async fn baseline_run(model: &ScriptedModel) -> (usize, String) {
    let request = CompletionRequest::new(vec![Message::user("Go")]);
    let mut stream = model.stream(&request).await.expect("the script has a turn");
    let mut text = String::new();
    let mut deltas = 0;
    while let Some(chunk) = stream.next().await {
        match chunk.expect("the scripted stream does not fail") {
            StreamChunk::Text(delta) => {
                text.push_str(&delta);
                deltas += 1;
                black_box(delta);
            }
            StreamChunk::Done(response) => {
                black_box(response);
            }
            _ => unreachable!("the turn holds only text"),
        }
    }
    (deltas, text)
}

/// Consumes a streamed run to its end; returns the number of text deltas and the answer.
async fn reins_run(agent: &Agent) -> (usize, String) {
    let mut stream = agent.prompt("Go").stream();
    let mut deltas = 0;
    let mut output = String::new();
    while let Some(item) = stream.next().await {
        match item.expect("the run succeeds") {
            StreamItem::Text(delta) => {
                deltas += 1;
                black_box(delta);
            }
            StreamItem::Final(response) => output = response.output,
            _ => {}
        }
    }
    (deltas, output)
}

fn streaming(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let answer = answer();
    let build = |hooks: usize| {
        let mut builder = AgentBuilder::new(scripted_model(&answer));
        for _ in 0..hooks {
            builder = builder.add_hook(TextObserver);
        }
        builder.build()
    };

    // Every case streams all the deltas and the whole answer.
    rt.block_on(async {
        assert_eq!(
            baseline_run(&scripted_model(&answer)).await,
            (WORDS, answer.clone())
        );
        for hooks in [0, 1] {
            assert_eq!(reins_run(&build(hooks)).await, (WORDS, answer.clone()));
        }

        // The heap allocations of one run of each case, setup excluded.
        let model = scripted_model(&answer);
        CountingAllocator::start();
        drop(baseline_run(&model).await);
        let counts = CountingAllocator::stop();
        println!(
            "allocations: streaming/baseline: {} per run, peak {} bytes",
            counts.allocations, counts.peak_bytes
        );
        for hooks in [0, 1] {
            let agent = build(hooks);
            CountingAllocator::start();
            drop(reins_run(&agent).await);
            let counts = CountingAllocator::stop();
            println!(
                "allocations: streaming/reins/hooks={hooks}: {} per run, peak {} bytes",
                counts.allocations, counts.peak_bytes
            );
        }
    });

    let mut group = c.benchmark_group("streaming");
    group.throughput(Throughput::Elements(WORDS as u64));
    group.bench_function("baseline", |b| {
        b.to_async(&rt).iter_batched(
            || scripted_model(&answer),
            |model| async move { (baseline_run(&model).await, model) },
            BatchSize::SmallInput,
        );
    });
    for hooks in [0, 1] {
        group.bench_function(format!("reins/hooks={hooks}"), |b| {
            b.to_async(&rt).iter_batched(
                || build(hooks),
                |agent| async move { (reins_run(&agent).await, agent) },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, streaming);
criterion_main!(benches);
