//! The `fakellm` mock server, from the workspace's shared test servers.

pub use reins_test_servers::FakeLlm;
