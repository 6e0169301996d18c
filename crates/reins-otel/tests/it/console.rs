//! `OTEL_TRACES_EXPORTER=console` / `OTEL_METRICS_EXPORTER=console`: a run's spans and metrics
//! written as text on stderr, no collector needed, with content recorded as it would be sent
//! over OTLP (masked, or not at all when capture is off). Each test runs itself again in a
//! child process, where export is set up from the environment it is given.

use crate::harness::NamedModel;
use reins::agent::AgentBuilder;
use reins::testing::Turn;
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::process::{Command, Output};

/// Set in the child process, which runs the agent.
const CHILD: &str = "REINS_OTEL_TEST_CONSOLE_CHILD";

/// A key the default masks find (`sk-` and 20 characters or more).
const KEY: &str = "sk-proj-Zy98Xw76Vu54Ts32Rq10Po98Nm76";

/// What the child's agent answers, printed on its stdout.
const ANSWER: &str = "Sunny in Lisbon.";

/// Runs `test` again in a child process with `vars` set (and no OTLP endpoint, no
/// `RUST_LOG`, no capture variable unless `vars` sets them).
fn in_child(test: &str, vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove("RUST_LOG")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_TRACES_EXPORTER")
        .env_remove("OTEL_METRICS_EXPORTER")
        .env_remove(reins_otel::CAPTURE_CONTENT_VAR);
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().expect("the test binary starts")
}

/// In the child: export set up from the environment (warnings on stderr), an agent that
/// looks the weather up with the key in its prompt and the tool's output, its answer printed
/// on stdout, export shut down.
fn run_agent_in_child() {
    run_agent_with(reins_otel::Config::new());
}

/// [`run_agent_in_child`] with export set up by `config`.
fn run_agent_with(config: reins_otel::Config) {
    use tracing_subscriber::Layer as _;
    let warnings = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::filter::LevelFilter::WARN);
    let otel = config.init_with(warnings).expect("export is set up");
    let model = NamedModel::new([
        Turn::tool_calls([("lookup", json!({"city": "Lisbon"}))]),
        Turn::text(ANSWER),
    ]);
    let agent = AgentBuilder::new(model)
        .name("weather-agent")
        .tool(tool_fn(
            "lookup",
            "Today's weather.",
            |args: Value| async move {
                Ok::<_, Infallible>(format!("sunny in {} (fetched with {KEY})", args["city"]))
            },
        ))
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let prompt = format!("Weather in Lisbon? My key is {KEY}");
    let answer = runtime
        .block_on(async { agent.prompt(prompt).await })
        .unwrap();
    println!("{answer}");
    otel.shutdown().expect("the console takes everything");
}

#[test]
fn the_console_exporter_writes_the_runs_spans_on_stderr_with_content_masked() {
    if std::env::var_os(CHILD).is_some() {
        return run_agent_in_child();
    }
    let output = in_child(
        "console::the_console_exporter_writes_the_runs_spans_on_stderr_with_content_masked",
        &[
            ("OTEL_TRACES_EXPORTER", "console"),
            ("OTEL_METRICS_EXPORTER", "console"),
            (reins_otel::CAPTURE_CONTENT_VAR, "true"),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // The answer alone on stdout, as a pipe would read it.
    assert!(
        stdout.contains(ANSWER) && !stdout.contains("span \""),
        "{stdout}"
    );
    for line in [
        "span \"invoke_agent weather-agent\"",
        "  gen_ai.operation.name = \"invoke_agent\"",
        "  gen_ai.agent.name = \"weather-agent\"",
        "span \"chat gpt-test\"",
        "  gen_ai.operation.name = \"chat\"",
        "  gen_ai.provider.name = \"openai\"",
        "  gen_ai.request.model = \"gpt-test\"",
        "span \"execute_tool lookup\"",
        "  gen_ai.tool.name = \"lookup\"",
        "  gen_ai.input.messages = ",
        "  gen_ai.tool.call.result = \"sunny in",
        "metric \"gen_ai.client.operation.duration\"",
    ] {
        assert!(stderr.contains(line), "{line:?} in:\n{stderr}");
    }
    assert!(stderr.contains("Weather in Lisbon? My key is"), "{stderr}");
    assert!(!stderr.contains(KEY), "the key is masked:\n{stderr}");
}

#[test]
fn without_content_capture_the_console_shows_no_content_and_an_unknown_exporter_is_said() {
    if std::env::var_os(CHILD).is_some() {
        return run_agent_in_child();
    }
    let output = in_child(
        "console::without_content_capture_the_console_shows_no_content_and_an_unknown_exporter_is_said",
        &[
            ("OTEL_TRACES_EXPORTER", &format!("console, zipkin, {KEY}")),
            ("OTEL_METRICS_EXPORTER", "none"),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("span \"chat gpt-test\"")
            && stderr.contains("span \"execute_tool lookup\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("OTEL_TRACES_EXPORTER names zipkin and a value it does not know"),
        "{stderr}"
    );
    for content in [
        "Weather in Lisbon",
        "sunny in",
        "gen_ai.input.messages",
        KEY,
    ] {
        assert!(!stderr.contains(content), "{content:?} in:\n{stderr}");
    }
    assert!(
        !stderr.contains("metric \""),
        "metrics go nowhere:\n{stderr}"
    );
}

/// The path the child of [`the_exporters_chosen_in_code_write_where_they_are_told`] writes to.
const OUTPUT: &str = "REINS_OTEL_TEST_CONSOLE_OUTPUT";

/// Chosen in code, the exporters are what the code says whatever the variables do, and the
/// console writes where it is told; the redactor given in code masks the console's content.
#[test]
fn the_exporters_chosen_in_code_write_where_they_are_told() {
    if let Some(path) = std::env::var_os(OUTPUT).filter(|_| std::env::var_os(CHILD).is_some()) {
        let file = std::fs::File::create(path).unwrap();
        return run_agent_with(
            reins_otel::Config::new()
                .traces_exporter("console")
                .metrics_exporter("none")
                .capture_content(|_, text| Some(text.replace(KEY, "[the key]")))
                .console_output(file),
        );
    }
    let dir = std::env::temp_dir().join(format!("reins-otel-console-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trace.txt");
    let output = in_child(
        "console::the_exporters_chosen_in_code_write_where_they_are_told",
        &[
            // Both would send to a collector no one runs here.
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_METRICS_EXPORTER", "otlp"),
            (OUTPUT, &path.to_string_lossy()),
        ],
    );
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        written.contains("span \"invoke_agent weather-agent\"")
            && written.contains("My key is [the key]"),
        "{written}"
    );
    assert!(!written.contains(KEY), "{written}");
    assert!(!stderr.contains("span \""), "{stderr}");
}
