//! Server-sent events decoding: reins' decoder against the `eventsource-stream` crate.
//!
//! Two measurements on the same input — a Chat Completions stream of 4,000 text deltas
//! (about 0.8 MB), delivered in 1,400-byte reads as a network would:
//!
//! - `decode/*`: bytes to events, throughput in MB/s.
//! - `to_hook/*`: bytes to a delta hook — the events' JSON is read into
//!   `StreamChunk::Text` deltas by a model, and a streamed agent run delivers each one to an
//!   observing `on_text_delta` hook; time per delta.
//! - `echoes/*`: what a hosted provider's stream adds to each delta to keep a key the server
//!   echoes out of the answer (`key`: scrubbed and checked for a held start of the key),
//!   against the same deltas handed on as they are (`none`); time per delta.
//!
//! Run with `cargo bench -p reins --bench sse`.

use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reins::agent::{AgentBuilder, AgentHook, HookContext, ObservationAction, TextDeltaEvent};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    RawResponse, StreamAssembler, StreamChunk, Usage,
};
use reins::providers::__private::{EchoFilter, Secrets, SseDecoder};
use serde_json::Value;
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::Arc;

const DELTAS: usize = 4_000;
const READ_SIZE: usize = 1_400;

fn stream_body() -> Vec<u8> {
    let mut body = String::new();
    for i in 0..DELTAS {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-5.5\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

fn reads(body: &[u8]) -> Vec<Bytes> {
    body.chunks(READ_SIZE).map(Bytes::copy_from_slice).collect()
}

fn decode_reins(reads: &[Bytes]) -> usize {
    let mut decoder = SseDecoder::new();
    let mut events = 0;
    for read in reads {
        let _ = decoder.feed(read, |event| {
            black_box(&event);
            events += 1;
        });
    }
    let _ = decoder.finish(|_| events += 1);
    events
}

async fn decode_eventsource(reads: Vec<Bytes>) -> usize {
    let stream = futures::stream::iter(reads.into_iter().map(Ok::<_, std::io::Error>));
    let mut events = stream.eventsource();
    let mut count = 0;
    while let Some(event) = events.next().await {
        if let Ok(event) = event {
            black_box(&event);
            count += 1;
        }
    }
    count
}

fn text_of(data: &str) -> Option<String> {
    let chunk: Value = serde_json::from_str(data).ok()?;
    chunk["choices"][0]["delta"]["content"]
        .as_str()
        .map(str::to_owned)
}

/// Turns decoded events into the chunks a provider streams, with the assembled `Done` last.
fn into_chunks(events: impl Stream<Item = String> + Send + 'static) -> CompletionStream {
    let mut assembler = Some(StreamAssembler::new());
    let chunks = events.filter_map(move |data| {
        let chunk = if data == "[DONE]" {
            assembler.take().map(|assembler| {
                StreamChunk::Done(assembler.finish(
                    Usage::default(),
                    None,
                    None,
                    RawResponse::none(),
                ))
            })
        } else {
            text_of(&data).map(|text| {
                if let Some(assembler) = assembler.as_mut() {
                    assembler.text(&text);
                }
                StreamChunk::Text(text)
            })
        };
        futures::future::ready(chunk.map(Ok))
    });
    Box::pin(chunks)
}

/// A model that streams a recorded HTTP body through one of the two decoders.
struct RecordedModel {
    reads: Vec<Bytes>,
    eventsource: bool,
}

impl CompletionModel for RecordedModel {
    async fn completion(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        Err(CompletionError::Other("stream only".into()))
    }

    async fn stream(
        &self,
        _request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let reads = self.reads.clone();
        if self.eventsource {
            let events = futures::stream::iter(reads.into_iter().map(Ok::<_, std::io::Error>))
                .eventsource()
                .filter_map(|event| futures::future::ready(event.ok().map(|e| e.data)));
            Ok(into_chunks(events))
        } else {
            let events = futures::stream::iter(reads)
                .scan(SseDecoder::new(), |decoder, read| {
                    let mut out = Vec::new();
                    let _ = decoder.feed(&read, |event| out.push(event.data));
                    futures::future::ready(Some(futures::stream::iter(out)))
                })
                .flatten();
            Ok(into_chunks(events))
        }
    }
}

struct Observer;

impl AgentHook for Observer {
    async fn on_text_delta(
        &self,
        _ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        black_box(event.delta);
        ObservationAction::continue_run()
    }
}

fn benches(c: &mut Criterion) {
    let body = stream_body();
    let reads = reads(&body);
    assert_eq!(decode_reins(&reads), DELTAS + 1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(
        runtime.block_on(decode_eventsource(reads.clone())),
        DELTAS + 1
    );

    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("reins", |b| b.iter(|| decode_reins(black_box(&reads))));
    group.bench_function("eventsource-stream", |b| {
        b.to_async(&runtime).iter_batched(
            || reads.clone(),
            decode_eventsource,
            BatchSize::SmallInput,
        )
    });
    group.finish();

    let mut group = c.benchmark_group("to_hook");
    group.throughput(Throughput::Elements(DELTAS as u64));
    for (name, eventsource) in [("reins", false), ("eventsource-stream", true)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter_batched(
                || {
                    let model = RecordedModel {
                        reads: reads.clone(),
                        eventsource,
                    };
                    AgentBuilder::new(model).add_hook(Observer).build()
                },
                |agent| async move {
                    let mut stream = agent.prompt("go").stream();
                    let mut items = 0;
                    while let Some(item) = stream.next().await {
                        black_box(item.is_ok());
                        items += 1;
                    }
                    items
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

/// Hands each of `chunks` on, through `filter` when there is one, and takes it out again as
/// a stream's consumer would.
fn hand_on(chunks: Vec<StreamChunk>, mut filter: Option<EchoFilter>) -> usize {
    let mut ready = VecDeque::new();
    let mut handed = 0;
    for chunk in chunks {
        match &mut filter {
            Some(filter) => filter.pass(chunk, &mut ready),
            None => ready.push_back(chunk),
        }
        while let Some(chunk) = ready.pop_front() {
            black_box(&chunk);
            handed += 1;
        }
    }
    handed
}

fn echoes(c: &mut Criterion) {
    let deltas: Vec<StreamChunk> = (0..DELTAS)
        .map(|i| StreamChunk::Text(format!("word{i} ")))
        .collect();
    let secrets = Secrets::new(["sk-proj-Zq3Xv9Lw2Rt8Ny5Pb1Hc7Kd4Fm6Gj0Ta".to_owned()])
        .map(Arc::new)
        .expect("a key long enough to look for");
    assert_eq!(
        hand_on(deltas.clone(), Some(EchoFilter::new(secrets.clone()))),
        DELTAS
    );
    let mut group = c.benchmark_group("echoes");
    group.throughput(Throughput::Elements(DELTAS as u64));
    group.bench_function("none", |b| {
        b.iter_batched(
            || deltas.clone(),
            |d| hand_on(d, None),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("key", |b| {
        b.iter_batched(
            || (deltas.clone(), EchoFilter::new(secrets.clone())),
            |(d, filter)| hand_on(d, Some(filter)),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(sse, benches, echoes);
criterion_main!(sse);
