//! The OpenAI Responses API (being written).
