use super::parser::MAX_FIELD_BYTES;
use super::*;
use crate::weighed::{MAX_MESSAGE_BYTES, TOO_LONG_HEAD_BYTES};
use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::RxJsonRpcMessage;

/// The events `chunks` make, read one chunk after another.
fn events(chunks: &[&[u8]], asked: Option<RequestId>) -> Vec<Sse> {
    let mut parser = EventParser::new(Arc::from("s"), Arc::default(), asked);
    let mut ready = VecDeque::new();
    for chunk in chunks {
        parser.feed(chunk, &mut ready);
    }
    ready.into()
}

fn data(event: &Sse) -> &str {
    event.data.as_deref().unwrap_or("<none>")
}

/// The message of a refused event's data: the error answering a request.
fn refusal_of(event: &Sse) -> (Option<RequestId>, String) {
    let message: RxJsonRpcMessage<RoleClient> = serde_json::from_str(data(event)).unwrap();
    match message {
        JsonRpcMessage::Error(error) => (error.id, error.error.message.into_owned()),
        other => panic!("not an error: {other:?}"),
    }
}

#[test]
fn events_are_read_across_chunks_and_line_endings() {
    let read = events(
        &[
            b"\xEF\xBB\xBFdata: {\"a\":",
            b"1}\r",
            b"\nid: 7\r\n\r\n: a comment\n\nevent: ping\ndata\ndata:x\nretry: 30\n\n",
            b"data: last\rdata:  two spaces\r\r",
        ],
        None,
    );
    assert_eq!(read.len(), 3, "{read:?}");
    assert_eq!(data(&read[0]), r#"{"a":1}"#);
    assert_eq!(read[0].id.as_deref(), Some("7"));
    assert_eq!(read[1].event.as_deref(), Some("ping"));
    assert_eq!(data(&read[1]), "\nx");
    assert_eq!(read[1].retry, Some(30));
    assert_eq!(data(&read[2]), "last\n two spaces");
}

#[test]
fn an_event_not_ended_is_not_given_and_odd_fields_are_ignored() {
    let read = events(
        &[b"foo: bar\nretry: 1x\nid: a\0b\nevent: \xff\ndata: 1\n\ndata: unfinished\n"],
        None,
    );
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!((read[0].retry, read[0].id.as_deref()), (None, None));
    assert_eq!(read[0].event.as_deref(), Some("\u{fffd}"));
    assert_eq!(data(&read[0]), "1");
}

#[test]
fn a_heavy_message_becomes_the_error_answering_its_request() {
    let bomb = vec![r#"{"a":0}"#; 128 * 1024].join(",");
    let message = format!(r#"data: {{"jsonrpc":"2.0","id":3,"result":{{"x":[{bomb}]}}}}"#);
    let read = events(&[message.as_bytes(), b"\nid: e1\n\n"], None);
    let (id, why) = refusal_of(&read[0]);
    assert_eq!(id, Some(RequestId::Number(3)));
    assert!(why.contains("once parsed"), "{why}");
    // Its id is kept, for a stream resumed after it.
    assert_eq!(read[0].id.as_deref(), Some("e1"));

    // A heavy request of the server's answers nothing: the event passes without its data.
    let request = format!(r#"data: {{"jsonrpc":"2.0","id":1,"method":"x","params":[{bomb}]}}"#);
    let read = events(&[request.as_bytes(), b"\n\n"], None);
    assert_eq!(read[0].data, None);
}

#[test]
fn a_long_event_is_cut_and_answers_the_request_it_came_back_for() {
    let mut parser = EventParser::new(Arc::from("s"), Arc::default(), Some(RequestId::Number(5)));
    let mut ready = VecDeque::new();
    parser.feed(br#"data: {"jsonrpc":"2.0","result":{"text":""#, &mut ready);
    let mega = vec![b'x'; 1024 * 1024];
    for _ in 0..17 {
        parser.feed(&mega, &mut ready);
        assert!(parser.data_kept() <= MAX_MESSAGE_BYTES);
    }
    assert!(parser.data_kept() <= TOO_LONG_HEAD_BYTES);
    parser.feed(
        b"\"}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n",
        &mut ready,
    );
    let read: Vec<Sse> = ready.into();
    let (id, why) = refusal_of(&read[0]);
    assert_eq!(id, Some(RequestId::Number(5)));
    assert!(why.contains("over the 16 MiB"), "{why}");
    // The stream goes on after it.
    assert_eq!(data(&read[1]), r#"{"jsonrpc":"2.0","method":"n"}"#);
}

#[test]
fn a_long_field_is_ignored() {
    let long_id = format!("id: {}\ndata: 1\n\n", "i".repeat(MAX_FIELD_BYTES + 1));
    let read = events(&[long_id.as_bytes()], None);
    assert_eq!((read[0].id.as_deref(), data(&read[0])), (None, "1"));
}

#[tokio::test]
async fn a_body_cut_short_ends_the_stream_with_an_error() {
    let chunks = vec![
        Ok(Bytes::from_static(b"data: 1\n\ndata: 2")),
        Err(std::io::Error::other("reset")),
    ];
    let mut stream = weighed_events(
        futures::stream::iter(chunks),
        Arc::from("s"),
        Arc::default(),
        None,
        None,
    );
    assert_eq!(data(&stream.next().await.unwrap().unwrap()), "1");
    assert!(matches!(stream.next().await, Some(Err(SseError::Body(_)))));
    assert!(stream.next().await.is_none());
}

#[test]
fn an_event_holding_a_batch_is_an_event_a_message_the_last_with_its_id() {
    let read = events(
        &[b"id: 9\nretry: 5\ndata: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},[],\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"p\"}]\n\nid: 10\ndata: []\n\nevent: other\ndata: [1]\n\n"],
        None,
    );
    let shown: Vec<_> = read
        .iter()
        .map(|event| (data(event), event.id.as_deref(), event.retry))
        .collect();
    assert_eq!(
        shown,
        [
            (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, None, None),
            (
                r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
                Some("9"),
                Some(5)
            ),
            // An empty batch keeps its id, for a stream resumed after it.
            ("<none>", Some("10"), None),
            // rmcp reads no message from another type of event: it is left as it is.
            ("[1]", None, None),
        ]
    );
}

#[tokio::test]
async fn a_json_body_on_the_get_stream_is_passed_over_and_ends_it() {
    // The GET stream answers no request: the JSON is not read as events (its `data: 1`
    // line neither), nothing is answered, and nothing after it is read (the error).
    let chunks = vec![
        Ok(Bytes::from_static(b"\xEF\xBB\xBF \r\n")),
        Ok(Bytes::from_static(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n\ndata: 1\n\n",
        )),
        Err(std::io::Error::other("not read")),
    ];
    let stream = weighed_events(
        futures::stream::iter(chunks),
        Arc::from("s"),
        Arc::default(),
        None,
        Some("text/event-stream".to_owned()),
    );
    let read: Vec<_> = stream.collect().await;
    assert!(read.is_empty(), "{read:?}");
}

#[test]
fn a_json_body_answering_a_post_is_the_error_answering_its_request() {
    let read = events(
        &[b"  [{\"jsonrpc\":\"2.0\",\"id\":4,", b"\"result\":{}}]"],
        Some(RequestId::Number(4)),
    );
    assert_eq!(read.len(), 1, "{read:?}");
    let (id, message) = refusal_of(&read[0]);
    assert_eq!(id, Some(RequestId::Number(4)));
    assert!(message.contains("body is JSON"), "{message}");
}
