//! What a skill handler takes: the call the dispatcher makes of a message ([`SkillCall`]) and
//! each argument type drawn from it ([`SkillArg`]), with the glue the macros' generated code
//! calls (through `__private`). The user guide, with the tables of types, is on `#[skill]` in
//! `lib.rs`.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::SkillContext;
use crate::file::File;
use crate::schema::NamedSchema;
use crate::skill::{Input, Io, Reply, SkillError, SkillFuture};

/// The incoming message, as the dispatcher gives it to a skill.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillCall {
    /// The input the message carries for the skill.
    pub input: CallInput,
    /// The message's files, in order.
    pub files: Vec<File>,
    /// The task, the context and the raw message.
    pub context: SkillContext,
}

impl SkillCall {
    /// A call with this input and context.
    pub fn new(input: CallInput, context: SkillContext) -> Self {
        SkillCall {
            input,
            files: Vec::new(),
            context,
        }
    }

    /// The same call, carrying these files.
    pub fn with_files(mut self, files: Vec<File>) -> Self {
        self.files = files;
        self
    }
}

/// The input of a call.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallInput {
    /// The message's text.
    Text(String),
    /// The data of the message's structured part (already validated against the schema).
    Data(Value),
    /// Nothing (already taken by an argument).
    None,
}

/// A type a skill handler can take as an argument. See [`#[skill]`](macro@crate::skill) for the
/// types that are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a skill",
    label = "the dispatcher cannot produce this argument",
    note = "a skill takes at most one input: a type deriving `a2a_card::Schema` and `serde::Deserialize`, `String`, `a2a_card::Input<T>`, or `serde_json::Value` (plain JSON); and optionally an `a2a_card::SkillContext` and the message's files (`a2a_card::File`, `Option<File>`, `Vec<File>`)"
)]
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub trait SkillArg: Sized + Send {
    /// The input this argument takes from the message.
    const INPUT: Io;
    /// Takes the argument from the call.
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError>;
}

fn take_input(call: &mut SkillCall) -> CallInput {
    std::mem::replace(&mut call.input, CallInput::None)
}

fn data<T: NamedSchema + DeserializeOwned>(value: Value) -> Result<T, SkillError> {
    serde_json::from_value(value).map_err(|e| {
        SkillError::Input(format!(
            "the data does not fit schema `{}`: {e}",
            T::SCHEMA_NAME
        ))
    })
}

impl<T: NamedSchema + DeserializeOwned + Send> SkillArg for T {
    const INPUT: Io = Io::of::<T>(false);
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Data(value) => data(value),
            _ => Err(SkillError::Input(format!(
                "this skill takes structured data (application/json;schema={}), not text",
                T::SCHEMA_NAME
            ))),
        }
    }
}

impl<T: NamedSchema + DeserializeOwned + Send> SkillArg for Input<T> {
    const INPUT: Io = Io::of::<T>(true);
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Text(text) => Ok(Input::Text(text)),
            CallInput::Data(value) => data(value).map(Input::Data),
            CallInput::None => Err(SkillError::Input("the message has no input".into())),
        }
    }
}

impl SkillArg for String {
    const INPUT: Io = Io::TEXT;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Text(text) => Ok(text),
            _ => Err(SkillError::Input(
                "this skill takes text (text/plain)".into(),
            )),
        }
    }
}

/// Plain JSON: a data part without a schema media type (`application/json`, or none), as it
/// is. The skill lists `application/json`.
impl SkillArg for Value {
    const INPUT: Io = Io::JSON;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Data(value) => Ok(value),
            _ => Err(SkillError::Input(
                "this skill takes JSON data (application/json): send a data part".into(),
            )),
        }
    }
}

impl SkillArg for SkillContext {
    const INPUT: Io = Io {
        context: true,
        ..Io::NONE
    };
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok(call.context.clone())
    }
}

impl SkillArg for File {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        if call.files.is_empty() {
            return Err(SkillError::Input(
                "this skill takes a file: attach one as a file part".into(),
            ));
        }
        Ok(call.files.remove(0))
    }
}

impl SkillArg for Option<File> {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok((!call.files.is_empty()).then(|| call.files.remove(0)))
    }
}

impl SkillArg for Vec<File> {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok(std::mem::take(&mut call.files))
    }
}

/// The future of a handler that does not await: `run` (taking the handler's arguments out of
/// the call, calling it and turning its value into a reply) runs when the future is first
/// polled, as an `async` block's body would, and the call is ready at once: a closure where an
/// `async` block would make the compiler lay out and check one more coroutine per skill.
fn lazy<'a, F>(run: F) -> SkillFuture<'a>
where
    F: FnOnce() -> Result<Reply, SkillError> + Send + Unpin + 'a,
{
    Box::pin(Lazy(Some(run)))
}

/// The future of an `async` handler's call: `handler` (the handler's future, its arguments
/// already taken out of `call`) awaited and its value turned into a reply by `reply`, `call`
/// kept until then (what is left of it is dropped when the handler has answered, as it would
/// be at the end of an `async` block holding it).
fn awaited<'a, F, R>(
    call: SkillCall,
    handler: F,
    reply: fn(R) -> Result<Reply, SkillError>,
) -> SkillFuture<'a>
where
    F: Future<Output = R> + Send + 'a,
    R: 'a,
{
    Box::pin(async move {
        let reply = reply(handler.await);
        drop(call);
        reply
    })
}

/// The call of a handler whose arguments could not be taken out of the call: `error` at once.
fn refused<'a>(error: SkillError) -> SkillFuture<'a> {
    Box::pin(std::future::ready(Err(error)))
}

/// How an argument is taken out of a call: `<T as SkillArg>::extract`, as a function pointer
/// (the generated code casts to it: a function pointer has no bounds of its own to check again,
/// so a type that is not an argument is reported once, at the path's type).
pub type Extract<T> = fn(&mut SkillCall) -> Result<T, SkillError>;

/// How a handler's value is made a reply: `<R as SkillReturn>::into_reply`.
type IntoReply<R> = fn(R) -> Result<Reply, SkillError>;

/// The arguments of a handler: a tuple of how to take each out of a call (for each argument
/// type `T`, `<T as SkillArg>::extract`; `Types` is the tuple of those types), which calls the
/// handler `F` with the leading arguments `L` (`(&agent,)` for a handler taking `&self`, `()`
/// for one without) and the arguments taken out, in order. Implemented for up to eight
/// arguments (`#[skill]` refuses more: `MAX_ARGS` in `a2a-card-derive`'s `skill.rs`).
pub trait Arguments<L, F, Out, Types> {
    /// Takes each argument out of `call` and calls `handler`; the first argument that cannot
    /// be taken is the error, and the handler is not called.
    fn apply(self, lead: L, call: &mut SkillCall, handler: F) -> Result<Out, SkillError>;
}

macro_rules! arguments {
    ($(($($A:ident $a:ident),*))*) => {$(
        impl<F, Out, $($A),*> Arguments<(), F, Out, ($($A,)*)> for ($(Extract<$A>,)*)
        where
            F: FnOnce($($A),*) -> Out,
        {
            #[allow(unused_variables)]
            fn apply(self, (): (), call: &mut SkillCall, handler: F) -> Result<Out, SkillError> {
                let ($($a,)*) = self;
                $(let $a = $a(call)?;)*
                Ok(handler($($a),*))
            }
        }

        impl<T, F, Out, $($A),*> Arguments<(T,), F, Out, ($($A,)*)> for ($(Extract<$A>,)*)
        where
            F: FnOnce(T $(, $A)*) -> Out,
        {
            #[allow(unused_variables)]
            fn apply(self, (this,): (T,), call: &mut SkillCall, handler: F) -> Result<Out, SkillError> {
                let ($($a,)*) = self;
                $(let $a = $a(call)?;)*
                Ok(handler(this $(, $a)*))
            }
        }
    )*};
}

arguments! {
    ()
    (A0 a0)
    (A0 a0, A1 a1)
    (A0 a0, A1 a1, A2 a2)
    (A0 a0, A1 a1, A2 a2, A3 a3)
    (A0 a0, A1 a1, A2 a2, A3 a3, A4 a4)
    (A0 a0, A1 a1, A2 a2, A3 a3, A4 a4, A5 a5)
    (A0 a0, A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6)
    (A0 a0, A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7)
}

/// Calls a handler that does not await, on the call's first poll: what a skill's generated
/// call glue calls, with the leading arguments (`(self,)` or `()`), the handler,
/// `<T as SkillArg>::extract` of each argument type and `<R as SkillReturn>::into_reply` of
/// the return type, written with the handler's types (`call_sync((self,), call, Self::judge,
/// (<Fight as SkillArg>::extract as Extract<_>,), <Verdict as SkillReturn>::into_reply)`).
///
/// Neither function bounds those types: a type that cannot be an argument or an answer is
/// reported once, at the user's type, where the skill's declaration (`<T as
/// SkillArg>::INPUT`) reports the same error. One generic function for every skill, where code
/// per skill (a closure, a match per argument) would give the compiler a body of its own to
/// lower and check for every skill of the agent on every check of the crate.
pub fn call_sync<'a, L, F, A, Types, R>(
    lead: L,
    mut call: SkillCall,
    handler: F,
    args: A,
    reply: IntoReply<R>,
) -> SkillFuture<'a>
where
    A: Arguments<L, F, R, Types> + Send + Unpin + 'a,
    L: Send + Unpin + 'a,
    F: Send + Unpin + 'a,
    R: 'a,
{
    lazy(move || args.apply(lead, &mut call, handler).and_then(reply))
}

/// Calls an `async` handler: [`call_sync`]'s twin for handlers whose future is awaited. The
/// arguments are taken out at once; the future answers the first that cannot be.
pub fn call_async<'a, L, F, A, Types, Fut, R>(
    lead: L,
    mut call: SkillCall,
    handler: F,
    args: A,
    reply: IntoReply<R>,
) -> SkillFuture<'a>
where
    A: Arguments<L, F, Fut, Types>,
    Fut: Future<Output = R> + Send + 'a,
    R: 'a,
{
    match args.apply(lead, &mut call, handler) {
        Ok(future) => awaited(call, future, reply),
        Err(error) => refused(error),
    }
}

/// The future [`lazy`] returns.
struct Lazy<F>(Option<F>);

impl<F> std::future::Future for Lazy<F>
where
    F: FnOnce() -> Result<Reply, SkillError> + Unpin,
{
    type Output = Result<Reply, SkillError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.get_mut().0.take() {
            Some(run) => std::task::Poll::Ready(run()),
            // Polled again after it was ready: a caller's mistake, answered without a panic.
            None => std::task::Poll::Ready(Err(SkillError::Failed(
                "the skill's call was polled after it had answered".into(),
            ))),
        }
    }
}

/// Sends a streaming handler's items as they come, each turned into a reply by `reply` (what
/// `#[skill]` calls for a handler that returns `impl Stream<Item = R>`, with
/// `R::into_reply`).
#[doc(hidden)]
pub async fn drain<S, R>(
    stream: S,
    context: &SkillContext,
    reply: fn(R) -> Result<Reply, SkillError>,
) -> Result<Reply, SkillError>
where
    S: futures::Stream<Item = R> + Send,
{
    context.drain(stream, reply).await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Waker};

    use super::*;

    fn poll(future: &mut crate::skill::SkillFuture<'_>) -> Poll<Result<Reply, SkillError>> {
        future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
    }

    fn call() -> SkillCall {
        let context = SkillContext::new(None, None, serde_json::json!({}));
        SkillCall::new(CallInput::Text("hi".into()), context)
    }

    #[test]
    fn a_handler_without_await_runs_when_its_call_is_first_polled_not_when_made() {
        let ran = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&ran);
        let mut future = lazy(move || {
            seen.store(true, Ordering::SeqCst);
            Ok(Reply::Text("done".into()))
        });
        assert!(
            !ran.load(Ordering::SeqCst),
            "the handler ran before its call was polled"
        );
        assert!(matches!(poll(&mut future), Poll::Ready(Ok(Reply::Text(t))) if t == "done"));
        assert!(ran.load(Ordering::SeqCst));
        // Polled again, it answers an error rather than panicking or running twice.
        match poll(&mut future) {
            Poll::Ready(Err(SkillError::Failed(why))) => {
                assert!(why.contains("polled after"), "{why}")
            }
            other => panic!("a second poll answered {other:?}"),
        }
    }

    #[test]
    fn an_async_handler_is_awaited_and_its_value_made_a_reply() {
        let (tx, rx) = futures::channel::oneshot::channel::<String>();
        let handler = async move { rx.await.unwrap_or_default() };
        let mut future = awaited(call(), handler, |text: String| Ok(Reply::Text(text)));
        assert!(
            poll(&mut future).is_pending(),
            "answered before the handler did"
        );
        let _ = tx.send("late".into());
        assert!(matches!(poll(&mut future), Poll::Ready(Ok(Reply::Text(t))) if t == "late"));
    }

    struct Judge {
        calls: AtomicBool,
    }

    impl Judge {
        fn verdict(&self, fight: String, context: SkillContext) -> String {
            self.calls.store(true, Ordering::SeqCst);
            format!("{fight} in {:?}", context.task_id)
        }

        async fn later(fight: String) -> String {
            std::future::ready(()).await;
            fight
        }
    }

    fn text(reply: Poll<Result<Reply, SkillError>>) -> String {
        match reply {
            Poll::Ready(Ok(Reply::Text(text))) => text,
            other => panic!("expected a text reply, got {other:?}"),
        }
    }

    #[test]
    fn the_call_functions_take_each_argument_in_order_and_call_the_handler() {
        use crate::skill::SkillReturn;
        let judge = Judge {
            calls: AtomicBool::new(false),
        };
        let mut future = call_sync(
            (&judge,),
            call(),
            Judge::verdict,
            (
                <String as SkillArg>::extract as Extract<_>,
                <SkillContext as SkillArg>::extract as Extract<_>,
            ),
            <String as SkillReturn>::into_reply,
        );
        assert!(
            !judge.calls.load(Ordering::SeqCst),
            "the handler ran before its call was polled"
        );
        assert_eq!(text(poll(&mut future)), "hi in None");
        drop(future);
        let mut future = call_async(
            (),
            call(),
            Judge::later,
            (<String as SkillArg>::extract as Extract<_>,),
            <String as SkillReturn>::into_reply,
        );
        assert_eq!(text(poll(&mut future)), "hi");
    }

    #[test]
    fn a_call_function_answers_an_argument_it_cannot_take_without_calling_the_handler() {
        use crate::skill::SkillReturn;
        let judge = Judge {
            calls: AtomicBool::new(false),
        };
        let data = SkillCall::new(
            CallInput::Data(serde_json::json!({"a": 1})),
            SkillContext::default(),
        );
        let mut future = call_sync(
            (&judge,),
            data.clone(),
            Judge::verdict,
            (
                <String as SkillArg>::extract as Extract<_>,
                <SkillContext as SkillArg>::extract as Extract<_>,
            ),
            <String as SkillReturn>::into_reply,
        );
        match poll(&mut future) {
            Poll::Ready(Err(SkillError::Input(why))) => assert!(why.contains("text"), "{why}"),
            other => panic!("a data part for a text argument answered {other:?}"),
        }
        assert!(!judge.calls.load(Ordering::SeqCst), "the handler ran");
        let mut future = call_async(
            (),
            data,
            Judge::later,
            (<String as SkillArg>::extract as Extract<_>,),
            <String as SkillReturn>::into_reply,
        );
        assert!(matches!(
            poll(&mut future),
            Poll::Ready(Err(SkillError::Input(_)))
        ));
    }

    #[test]
    fn a_call_whose_arguments_cannot_be_taken_answers_why_at_once() {
        let mut future = refused(SkillError::Input("no text".into()));
        assert!(
            matches!(poll(&mut future), Poll::Ready(Err(SkillError::Input(why))) if why == "no text")
        );
    }
}
