//! Google's Gemini API (being written).
