mod check;
mod common;
#[cfg(feature = "local")]
mod demo;
#[cfg(feature = "local")]
mod offline;
mod run;
mod terminal;
mod ui;
