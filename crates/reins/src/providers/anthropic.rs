//! Anthropic's Messages API (being written).
