//! `tessera view`: write a page of pictures of an array or a group.

use crate::args::*;
use crate::storage::{target, Stores};
use std::path::PathBuf;
use std::process::ExitCode;
use tessera::fragment::group::{is_group, OpenGroup};
use tessera_view::{array_page, group::group_page, ViewOptions};

/// Write one self-contained HTML page of an array or a group.
#[derive(clap::Args)]
pub struct Args {
    /// The array or group.
    pub path: PathBuf,
    /// The page's file (default: the array's or group's name with `.html`,
    /// in the current folder); `-` writes it to stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Open at timestamp `T`, or at the range `T1:T2` (milliseconds).
    #[arg(long)]
    pub timestamp: Option<String>,
    /// AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
    /// The attribute a dense array's slice shows (default: the first numeric one).
    #[arg(long)]
    pub attr: Option<String>,
    /// `DIM=LO:HI`: draw over this range; a dense slice's other dimensions
    /// are held at LO. Repeat for several dimensions.
    #[arg(long)]
    pub subarray: Vec<String>,
    /// The dimensions drawn, comma-separated: one, or two (the first down
    /// the page). Default: the first two that are not strings.
    #[arg(long, value_delimiter = ',')]
    pub dims: Option<Vec<String>>,
    /// Memory for reading cells: batches of about this many bytes.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub budget: u64,
    /// The cell picture's largest side in pixels (cells are averaged or
    /// counted into pixels).
    #[arg(long, default_value_t = 400)]
    pub pixels: u32,
}

/// Runs `tessera view`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let mut subarray = Vec::new();
    for s in &args.subarray {
        let (dim, range) = s
            .split_once('=')
            .ok_or_else(|| format!("--subarray `{s}`: expected DIM=LO:HI"))?;
        let (lo, hi) = range
            .split_once(':')
            .ok_or_else(|| format!("--subarray `{s}`: expected LO:HI"))?;
        subarray.push((dim.to_owned(), lo.trim().to_owned(), hi.trim().to_owned()));
    }
    if args.pixels == 0 {
        return Err("--pixels: at least 1".into());
    }
    let options = ViewOptions {
        attribute: args.attr.clone(),
        subarray,
        dims: args.dims.clone(),
        budget: args.budget,
        max_pixels: args.pixels,
        ..ViewOptions::default()
    };
    let path = &args.path;
    let page = if is_group(&*stores.storage(path)?, &target(path))? {
        let (t1, t2) = parse_timestamp(&args.timestamp)?;
        let key = parse_key(&args.key)?;
        let st = stores.storage(path)?;
        let g = OpenGroup::open(&*st, &target(path), t1, t2, key)?;
        group_page(&st, &g, &options)?
    } else {
        let select = Selection {
            subarray: Vec::new(),
            timestamp: args.timestamp.clone(),
            condition: None,
            key: args.key.clone(),
        };
        array_page(&select.session(path, stores)?, &options)?
    };
    let html = page.document();
    match args.output.as_deref() {
        Some(p) if p.as_os_str() == "-" => {
            use std::io::Write;
            std::io::stdout().write_all(html.as_bytes())?;
        }
        out => {
            let file = match out {
                Some(p) => p.to_path_buf(),
                None => default_output(path),
            };
            std::fs::write(&file, html).map_err(|e| format!("{}: {e}", file.display()))?;
            eprintln!("wrote {}", file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `<name>.html` in the current folder, named after the folder's last
/// part (a TileDB-Py fixture's `array` folder: its parent's name).
fn default_output(path: &std::path::Path) -> PathBuf {
    let text = path.to_string_lossy();
    let parts: Vec<&str> = text.trim_end_matches('/').rsplit('/').collect();
    let name = match parts.first() {
        Some(&"array") | Some(&"group") if parts.len() > 1 => parts[1],
        Some(n) if !n.is_empty() => n,
        _ => "view",
    };
    PathBuf::from(format!("{name}.html"))
}
