mod check;
mod common;
#[cfg(feature = "local")]
mod demo;
mod run;
mod terminal;
mod ui;
