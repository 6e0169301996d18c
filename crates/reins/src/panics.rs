//! Catching the panics of user code (models, tools, hooks, stores, deciders, tool sources):
//! what a caught panic says, a user method's answer awaited with its call inside the catch,
//! and what a model or a tool declares about itself, read inside one.

use futures::FutureExt;
use futures::future::CatchUnwind;
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// The answer of `call` (a user method returning a future), with the call itself inside the
/// catch as well as every poll: a method written as a plain `fn` runs code before it
/// returns its future. A panic is the `Err` of the output.
///
/// (`AssertUnwindSafe`: the callers only borrow what the user's code may have left half
/// changed, and use nothing of its answer after a panic.)
pub(crate) fn call_caught<F: Future>(
    call: impl FnOnce() -> F,
) -> CatchUnwind<AssertUnwindSafe<impl Future<Output = F::Output>>> {
    AssertUnwindSafe(async move { call().await }).catch_unwind()
}

/// What `read` (the method `what` of the user's type `T`: a model's or a tool's declaration
/// of itself) answers, or `None`, logged, when it panicked. Named by its type in the log:
/// its name is the user's code too.
pub(crate) fn declared<T: ?Sized, R>(what: &str, read: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(AssertUnwindSafe(read)) {
        Ok(declared) => Some(declared),
        Err(panic) => {
            tracing::error!(
                of = std::any::type_name::<T>(),
                message = %panic_message(panic.as_ref()),
                "`{what}` panicked; read as declaring nothing"
            );
            None
        }
    }
}
