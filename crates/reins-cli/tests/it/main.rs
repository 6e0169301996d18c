#[cfg(feature = "local")]
mod demo;
