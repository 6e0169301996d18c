use super::*;

/// A value nested deeper than any agent file's is not read by a recursion as deep: the
/// rest of the file is hidden instead, and the lines keep their length.
#[test]
fn a_value_nested_past_the_deepest_read_hides_the_rest() {
    let text = format!(
        "model = \"m\"\nx = {}1\ny = \"shown?\"",
        "[".repeat(100_000)
    );
    let shown = masked(&text);
    assert_eq!(shown.chars().count(), text.chars().count());
    assert!(
        shown.starts_with("model = \"m\"\nx = [["),
        "{}",
        &shown[..40]
    );
    // The line after it too, key and all: past the depth, nothing is read.
    let last_line = "y = \"shown?\"";
    assert!(
        shown.ends_with(&format!("\n{}", "*".repeat(last_line.len()))),
        "{}",
        &shown[shown.len() - 20..]
    );
}

#[test]
fn a_url_keeps_its_host_path_and_query_names() {
    assert_eq!(
        masked("url = \"https://alice:pw@host:8/mcp?token=t0k&mode=x#frag\"\n"),
        "url = \"https://********@host:8/mcp?token=***&mode=*#****\"\n"
    );
    assert_eq!(
        masked("# see postgres://u:p@db/x?sslmode=require\n"),
        "# see postgres://***@db/x?sslmode=*******\n"
    );
    assert_eq!(
        masked("base_url = \"http://localhost:8080/v1\"\n"),
        "base_url = \"http://localhost:8080/v1\"\n"
    );
}

#[test]
fn values_under_credential_names_are_masked_and_others_shown() {
    let source = "api_key = \"sk-1\"\nname = \"gpt-5\"\nmax_tokens = 100\n\
                  env = { GITHUB_TOKEN = 'ghp', HOME = \"/h\" }\n[secrets]\na = [\"x\", \"y\"]\n\
                  [model]\ntoken = sk-bare\nrestate_identity_keys = [\"publickeyv1_a\"]\n\
                  schema = { properties = { token = { type = \"string\" } } }\n";
    assert_eq!(
        masked(source),
        "api_key = \"****\"\nname = \"gpt-5\"\nmax_tokens = 100\n\
         env = { GITHUB_TOKEN = '***', HOME = \"/h\" }\n[secrets]\na = [\"*\", \"*\"]\n\
         [model]\ntoken = *******\nrestate_identity_keys = [\"publickeyv1_a\"]\n\
         schema = { properties = { token = { type = \"string\" } } }\n"
    );
}

#[test]
fn a_variable_s_name_is_shown_and_a_value_in_its_place_is_not() {
    let source = "api_key_env = \"OPENAI_API_KEY\"\n\
                  headers_from_env = { Authorization = \"AUTH\", \"X-Key\" = \"Bearer x\" }\n";
    assert_eq!(
        masked(source),
        "api_key_env = \"OPENAI_API_KEY\"\n\
         headers_from_env = { Authorization = \"AUTH\", \"X-Key\" = \"********\" }\n"
    );
}

#[test]
fn broken_toml_is_masked_too() {
    // Two keys on a line, an open string, a multi-line string, a key with a blank in it.
    let source = "url = \"x\" api_key = \"sk-1\"\ntoken = \"open\npassword = \"\"\"\nline\n\"\"\"\n\
                  api key = \"k\"\n";
    assert_eq!(
        masked(source),
        "url = \"x\" api_key = \"****\"\ntoken = \"****\npassword = \"\"\"\n****\n\"\"\"\n\
         api key = \"*\"\n"
    );
}

#[test]
fn columns_stay_where_they_were() {
    let source = "api_key = \"ключ-секрет\" # é\n";
    let masked = masked(source);
    assert_eq!(masked.chars().count(), source.chars().count());
    assert_eq!(masked, "api_key = \"***********\" # é\n");
}
