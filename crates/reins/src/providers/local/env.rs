//! The environment variables the local model reads.

/// The environment variable naming a GGUF file to use instead of the default model.
pub const MODEL_ENV: &str = "REINS_MODEL";
/// The environment variable overriding the cache directory (`<user cache dir>/reins` otherwise).
pub const CACHE_DIR_ENV: &str = "REINS_CACHE_DIR";
/// The environment variable naming the Python interpreter used to run pip (`python3` otherwise).
pub const PYTHON_ENV: &str = "REINS_PYTHON";
