//! Picks each next token without ever reaching llama.cpp's throwing paths.
//!
//! `LlamaSampler::sample` (llama.cpp's `llama_sampler_sample`) accepts the token it picks into
//! the grammar with no `try`/`catch`: when the grammar cannot follow a token, llama.cpp throws
//! a C++ exception (or aborts, for an end-of-generation token) that Rust cannot catch, and the
//! process dies. So the sampler here does the steps itself: it reads the logits, checks they
//! are numbers, lets the grammar mask what it rejects, picks among what is left, and accepts
//! only a token the grammar allowed, through `try_accept` (wrapped in `try`/`catch` by
//! llama-cpp-2's C++ shim). An end-of-generation token ends the turn and is never accepted
//! into the grammar.

use super::LocalModelError;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

/// How tokens are picked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sampling {
    /// 0 picks the most likely token (greedy).
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    /// 1.0 disables the penalty.
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u32,
}

impl Default for Sampling {
    /// The builder's defaults (`LocalModelBuilder`'s setters name them).
    fn default() -> Self {
        Sampling {
            temperature: 0.2,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.0,
            repeat_last_n: 64,
            seed: 42,
        }
    }
}

/// The sampler of one turn.
pub(super) struct TokenSampler {
    /// The grammar, when the turn has one.
    grammar: Option<LlamaSampler>,
    /// Whether the grammar constrains tokens yet: a tool grammar of `ToolChoice::Auto` starts
    /// once the model has written the opening tag (see `constrain`).
    constraining: bool,
    /// Penalties, then the pick (greedy, or top-k/top-p/min-p/temperature and a draw).
    chain: LlamaSampler,
    /// The candidates, reused from token to token.
    candidates: LlamaTokenDataArray,
}

impl TokenSampler {
    /// A sampler whose `grammar` (GBNF, root rule `root`) applies from the first token when
    /// `constraining`, else from [`constrain`](Self::constrain) on. llama.cpp parses the
    /// grammar now, so a grammar it rejects fails the turn before anything is generated.
    pub fn new(
        model: &LlamaModel,
        grammar: Option<&str>,
        constraining: bool,
        sampling: Sampling,
    ) -> Result<Self, LocalModelError> {
        let grammar = grammar
            .map(|rules| {
                LlamaSampler::grammar(model, rules, "root").map_err(|error| {
                    LocalModelError::Grammar(format!(
                        "llama.cpp rejected the tool grammar: {error}"
                    ))
                })
            })
            .transpose()?;
        Ok(TokenSampler {
            grammar,
            constraining,
            chain: chain(model, sampling),
            candidates: LlamaTokenDataArray::new(Vec::new(), false),
        })
    }

    /// Applies the grammar from the next token on.
    pub fn constrain(&mut self) {
        self.constraining = true;
    }

    /// Picks the next token from the logits of the batch's `index`-th output, and records it
    /// in the samplers' state (the repetition penalty's history, the grammar's position).
    pub fn sample(
        &mut self,
        model: &LlamaModel,
        context: &LlamaContext<'_>,
        index: i32,
    ) -> Result<LlamaToken, LocalModelError> {
        let logits = context.get_logits_ith(index);
        // NaN or infinite logits come from corrupt weights (or a broken backend): the
        // samplers' arithmetic on them is undefined, and one of them asserts.
        if let Some(token) = logits.iter().position(|logit| !logit.is_finite()) {
            return Err(LocalModelError::BadLogits {
                token,
                value: logits.get(token).copied().unwrap_or(f32::NAN),
            });
        }
        let candidates = &mut self.candidates;
        candidates.data.clear();
        candidates.data.extend(
            (0_i32..)
                .zip(logits)
                .map(|(id, logit)| LlamaTokenData::new(LlamaToken::new(id), *logit, 0.0)),
        );
        candidates.selected = None;
        candidates.sorted = false;
        if let Some(grammar) = self.grammar.as_mut().filter(|_| self.constraining) {
            // Sets every token the grammar cannot follow to -inf (this step never throws).
            candidates.apply_sampler(grammar);
            if !candidates
                .data
                .iter()
                .any(|c| c.logit() > f32::NEG_INFINITY)
            {
                return Err(LocalModelError::Grammar(
                    "the grammar allows no next token (a dead end in the tool or output \
                     grammar)"
                        .to_owned(),
                ));
            }
        }
        candidates.apply_sampler(&mut self.chain);
        let picked = candidates
            .selected
            .and_then(|index| candidates.data.get(index))
            .copied()
            .ok_or_else(|| LocalModelError::Decode("the sampler picked no token".to_owned()))?;
        if picked.logit() == f32::NEG_INFINITY {
            // Never handed to the grammar: it would throw on a token it rejected.
            return Err(LocalModelError::Decode(
                "the sampler picked a token the grammar rejects".to_owned(),
            ));
        }
        let token = picked.id();
        self.chain.accept(token);
        if model.vocab().is_eog(token) {
            // The turn ends here; llama.cpp aborts on an end token the grammar is not done
            // with, so it is not accepted.
            return Ok(token);
        }
        if let Some(grammar) = self.grammar.as_mut().filter(|_| self.constraining) {
            grammar.try_accept(token).map_err(|error| {
                LocalModelError::Grammar(format!(
                    "the grammar could not follow the token it allowed ({error})"
                ))
            })?;
        }
        Ok(token)
    }
}

/// Everything but the grammar, in llama.cpp's usual order.
fn chain(model: &LlamaModel, sampling: Sampling) -> LlamaSampler {
    let mut chain = Vec::with_capacity(6);
    if sampling.repeat_penalty != 1.0 {
        chain.push(LlamaSampler::penalties(
            model.n_vocab(),
            sampling.repeat_last_n,
            sampling.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if sampling.temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
    } else {
        chain.push(LlamaSampler::top_k(sampling.top_k));
        chain.push(LlamaSampler::top_p(sampling.top_p, 1));
        chain.push(LlamaSampler::min_p(sampling.min_p, 1));
        chain.push(LlamaSampler::temp(sampling.temperature));
        chain.push(LlamaSampler::dist(sampling.seed));
    }
    LlamaSampler::chain_simple(chain)
}
