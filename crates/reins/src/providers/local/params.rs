//! A request's `additional_params`, read as the local model's sampling settings. A key it
//! does not know, or a value of the wrong type, is an error naming both: a misspelt key or a
//! `"seed": "7"` silently ignored would sample otherwise than asked.

use super::LocalModelError;
use super::sampler::Sampling;
use serde_json::Value;

/// The keys read, and the type each takes.
const KEYS: [(&str, &str); 6] = [
    ("stop", "a string or an array of strings"),
    ("seed", "an integer from 0 to 4294967295"),
    ("top_k", "an integer (0 or less: all tokens)"),
    ("top_p", "a number from 0 to 1"),
    ("min_p", "a number from 0 to 1"),
    ("repeat_penalty", "a number (1 disables it)"),
];

/// Applies `params` over `sampling`; returns the stop sequences they set, if any.
pub(super) fn apply(
    params: Option<&Value>,
    sampling: &mut Sampling,
) -> Result<Option<Vec<String>>, LocalModelError> {
    let params = match params {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(params)) => params,
        Some(other) => {
            return Err(LocalModelError::InvalidRequest(format!(
                "additional_params must be a JSON object of sampling settings, not {other}"
            )));
        }
    };
    let mut stop = None;
    for (key, value) in params {
        let Some((_, expected)) = KEYS.iter().find(|(known, _)| known == key) else {
            let known: Vec<_> = KEYS.iter().map(|(known, _)| format!("`{known}`")).collect();
            return Err(LocalModelError::InvalidRequest(format!(
                "additional_params has `{key}`, which the local model does not read: it reads {}",
                known.join(", ")
            )));
        };
        let wrong = || {
            LocalModelError::InvalidRequest(format!(
                "additional_params `{key}` is {value}, but it takes {expected}"
            ))
        };
        let number = || value.as_f64().filter(|n| n.is_finite()).ok_or_else(wrong);
        let fraction =
            || number().and_then(|n| (0.0..=1.0).contains(&n).then_some(n).ok_or_else(wrong));
        match key.as_str() {
            "stop" => {
                stop = Some(match value {
                    Value::String(stop) => vec![stop.clone()],
                    Value::Array(stops) => stops
                        .iter()
                        .map(|stop| stop.as_str().map(str::to_owned).ok_or_else(wrong))
                        .collect::<Result<_, _>>()?,
                    _ => return Err(wrong()),
                });
            }
            "seed" => {
                sampling.seed = value
                    .as_u64()
                    .and_then(|seed| u32::try_from(seed).ok())
                    .ok_or_else(wrong)?;
            }
            "top_k" => {
                sampling.top_k = value
                    .as_i64()
                    .and_then(|k| i32::try_from(k).ok())
                    .ok_or_else(wrong)?;
            }
            "top_p" => sampling.top_p = fraction()? as f32,
            "min_p" => sampling.min_p = fraction()? as f32,
            _ => sampling.repeat_penalty = number()? as f32,
        }
    }
    Ok(stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sampling() -> Sampling {
        Sampling::default()
    }

    fn error(params: Value) -> String {
        match apply(Some(&params), &mut sampling()) {
            Err(error) => error.to_string(),
            Ok(_) => panic!("{params} was accepted"),
        }
    }

    #[test]
    fn settings_are_read() {
        let mut sampling = sampling();
        let params = json!({"seed": 7, "top_k": 5, "top_p": 0.5, "min_p": 0.1,
                            "repeat_penalty": 1.1, "stop": ["a", "b"]});
        let stop = apply(Some(&params), &mut sampling).ok().flatten();
        assert_eq!(stop, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!((sampling.seed, sampling.top_k), (7, 5));
        assert_eq!((sampling.top_p, sampling.min_p), (0.5, 0.1));
        assert_eq!(sampling.repeat_penalty, 1.1);
        assert!(matches!(apply(None, &mut sampling), Ok(None)));
    }

    #[test]
    fn wrong_types_and_unknown_keys_are_named() {
        let seed = error(json!({"seed": "7"}));
        assert!(
            seed.contains("`seed`") && seed.contains("an integer"),
            "{seed}"
        );
        assert!(error(json!({"seed": -1})).contains("`seed`"));
        assert!(error(json!({"top_p": 2})).contains("`top_p`"));
        assert!(error(json!({"stop": [1]})).contains("`stop`"));
        let misspelt = error(json!({"temprature": 0.5}));
        assert!(
            misspelt.contains("`temprature`") && misspelt.contains("`seed`"),
            "{misspelt}"
        );
        assert!(error(json!([1])).contains("JSON object"));
    }
}
