//! `--config run.toml` and `--print-config`: settings files with the same keys as the flags.
//!
//! A settings file is a flat TOML table whose keys are the long flags of the subcommand it is used
//! with (`lambda-ratio = 0.01`, or `lambda_ratio`). Its settings are turned into flags placed before
//! the ones typed, and every flag overrides an earlier occurrence of itself, so the command line wins
//! over the file and the file over the defaults; clap then checks everything as usual. A key that is
//! not a flag of the subcommand is refused with the key and the file. `--print-config` prints the
//! effective settings of a command line as such a file.

use std::ffi::OsString;
use std::path::Path;

use clap::{ArgAction, ArgMatches, Command};

use crate::failure::Failure;

/// Flags every subcommand has that are not settings.
const NOT_SETTINGS: [&str; 5] = ["config", "print-config", "log-format", "help", "version"];

/// Makes every flag of `command` and of its subcommands override an earlier occurrence of itself.
pub fn overriding(command: Command) -> Command {
    let names: Vec<String> = command.get_subcommands().map(|c| c.get_name().to_string()).collect();
    let mut command = command.args_override_self(true);
    for name in names {
        command = command.mut_subcommand(name, overriding);
    }
    command
}

/// The arguments with the settings of `--config FILE`, if given, inserted as flags right after the
/// subcommand's name (before the flags typed, which thus override them).
pub fn expand(command: &Command, args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
    let mut file = None;
    let mut leaf = command;
    let mut path = vec![command.get_name().to_string()];
    let mut insert = 1;
    let mut walking = true;
    let mut i = 1;
    while i < args.len() {
        let token = args[i].to_string_lossy().into_owned();
        if token == "--config" {
            file = args.get(i + 1).cloned();
            i += 2;
            continue;
        }
        if let Some(value) = token.strip_prefix("--config=") {
            file = Some(OsString::from(value));
        } else if walking && !token.starts_with('-') {
            match leaf.find_subcommand(&token) {
                Some(sub) => {
                    leaf = sub;
                    path.push(token);
                    insert = i + 1;
                }
                None => walking = false,
            }
        } else if token != "--print-config" {
            walking = false;
        }
        i += 1;
    }
    let Some(file) = file else { return Ok(args) };
    let file = Path::new(&file);
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::input(format!("{}: cannot read the settings file: {e}", file.display())))?;
    let table: toml::Table =
        text.parse().map_err(|e| Failure::input(format!("{}: not a TOML settings file: {e}", file.display())))?;
    let name = path.join(" ");
    let known: Vec<&str> =
        leaf.get_arguments().filter_map(|a| a.get_long()).filter(|l| !NOT_SETTINGS.contains(l)).collect();
    let mut flags: Vec<OsString> = Vec::new();
    for (key, value) in &table {
        let long = key.replace('_', "-");
        let Some(arg) = leaf
            .get_arguments()
            .find(|a| a.get_long() == Some(long.as_str()) && !NOT_SETTINGS.contains(&long.as_str()))
        else {
            return Err(Failure::input(format!(
                "{}: unknown key '{key}' for `{name}` (its keys: {})",
                file.display(),
                known.join(", ")
            )));
        };
        let flag = OsString::from(format!("--{long}"));
        let bad = |what: &str| Failure::input(format!("{}: key '{key}': {what}", file.display()));
        match (value, arg.get_action()) {
            (toml::Value::Boolean(on), ArgAction::SetTrue) => {
                if *on {
                    flags.push(flag);
                }
            }
            (_, ArgAction::SetTrue) => return Err(bad("expects true or false")),
            (toml::Value::String(s), _) => flags.extend([flag, s.into()]),
            (toml::Value::Integer(n), _) => flags.extend([flag, n.to_string().into()]),
            (toml::Value::Float(x), _) => flags.extend([flag, x.to_string().into()]),
            (toml::Value::Boolean(b), _) => flags.extend([flag, b.to_string().into()]),
            (toml::Value::Array(items), _) if arg.get_value_delimiter().is_some() => {
                let mut parts = Vec::with_capacity(items.len());
                for item in items {
                    parts.push(match item {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => item.to_string(),
                        _ => return Err(bad("a list of plain values is expected")),
                    });
                }
                flags.extend([flag, parts.join(",").into()]);
            }
            _ => return Err(bad("a single number, string or boolean is expected")),
        }
    }
    let mut expanded = args[..insert].to_vec();
    expanded.extend(flags);
    expanded.extend_from_slice(&args[insert..]);
    Ok(expanded)
}

/// The effective settings of a parsed command line, as a TOML settings file.
pub fn print(command: &Command, matches: &ArgMatches) -> String {
    let (mut leaf, mut leaf_matches) = (command, matches);
    let mut path = vec![command.get_name().to_string()];
    while let Some((name, sub_matches)) = leaf_matches.subcommand() {
        let Some(sub) = leaf.find_subcommand(name) else { break };
        path.push(name.to_string());
        leaf = sub;
        leaf_matches = sub_matches;
    }
    let mut out = format!("# {}: the effective settings (file, flags and defaults)\n", path.join(" "));
    for arg in leaf.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if NOT_SETTINGS.contains(&long) {
            continue;
        }
        let id = arg.get_id().as_str();
        let Some(values) = leaf_matches.get_raw(id) else { continue };
        let values: Vec<String> = values.map(|v| v.to_string_lossy().into_owned()).collect();
        let value = match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => values.first().cloned().unwrap_or_default(),
            _ if values.len() == 1 => typed(&values[0]),
            _ => format!("[{}]", values.iter().map(|v| typed(v)).collect::<Vec<_>>().join(", ")),
        };
        out.push_str(&format!("{long} = {value}\n"));
    }
    out
}

/// A value as TOML: a number when it reads as one, else a quoted string.
fn typed(value: &str) -> String {
    if value.parse::<i64>().is_ok() {
        return value.to_string();
    }
    if let Ok(x) = value.parse::<f64>()
        && x.is_finite()
        && value.chars().any(|c| c.is_ascii_digit())
    {
        // TOML floats need a point or an exponent.
        let text = x.to_string();
        return if text.contains(['.', 'e', 'E']) { text } else { format!("{text}.0") };
    }
    toml::Value::String(value.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_typed_as_toml() {
        assert_eq!(typed("3"), "3");
        assert_eq!(typed("0.01"), "0.01");
        assert_eq!(typed("1e-6"), "0.000001");
        assert_eq!(typed("dynamic"), "\"dynamic\"");
        assert_eq!(typed("run/out"), "\"run/out\"");
        assert_eq!(typed("inf"), "\"inf\"");
    }
}
