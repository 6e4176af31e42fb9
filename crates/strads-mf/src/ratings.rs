//! Rating files: MatrixMarket coordinate, or delimited `user,item,rating[,timestamp]` lines with
//! any user and item ids, mapped to dense indices (and back through [`Ids`]).
//!
//! A delimited file's separator is the first of tab, comma, semicolon and `|` found on its first
//! line, else white space. Its first line is a header when its rating field is not a number or its
//! first two fields name a user and an item column; a typed header (`user_id:token`) is read
//! without its types. With a header, the user, item and rating columns are found by name (`user`,
//! `user_id`, `item`, `movie_id`, `rating`, ...), else they are the first three. Lines starting with
//! `#` or `%` are comments. Every error names the file and line.

use std::path::Path;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rustc_hash::FxHashMap;
use strads_data::{DataError, read_coordinates};

/// One rating: dense user and item indices and the value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// User index.
    pub user: u32,
    /// Item index.
    pub item: u32,
    /// The rating.
    pub value: f64,
}

/// The original ids of users and items, in the order of their dense indices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ids {
    /// User ids; user `u` is `users[u]`.
    pub users: Vec<String>,
    /// Item ids.
    pub items: Vec<String>,
    user_index: FxHashMap<String, u32>,
    item_index: FxHashMap<String, u32>,
}

impl Ids {
    /// Ids from lists (for a saved model); the lists must not repeat an id.
    pub fn from_lists(users: Vec<String>, items: Vec<String>) -> Result<Ids, String> {
        let mut ids = Ids::default();
        for u in users {
            if ids.find_user(&u).is_some() {
                return Err(format!("user id '{u}' appears twice"));
            }
            ids.user(&u);
        }
        for i in items {
            if ids.find_item(&i).is_some() {
                return Err(format!("item id '{i}' appears twice"));
            }
            ids.item(&i);
        }
        Ok(ids)
    }

    /// The index of user `id`, added if new.
    pub fn user(&mut self, id: &str) -> u32 {
        intern(&mut self.users, &mut self.user_index, id)
    }

    /// The index of item `id`, added if new.
    pub fn item(&mut self, id: &str) -> u32 {
        intern(&mut self.items, &mut self.item_index, id)
    }

    /// The index of user `id`, if known.
    pub fn find_user(&self, id: &str) -> Option<u32> {
        self.user_index.get(id).copied()
    }

    /// The index of item `id`, if known.
    pub fn find_item(&self, id: &str) -> Option<u32> {
        self.item_index.get(id).copied()
    }
}

fn intern(list: &mut Vec<String>, index: &mut FxHashMap<String, u32>, id: &str) -> u32 {
    if let Some(&i) = index.get(id) {
        return i;
    }
    let i = list.len() as u32;
    list.push(id.to_string());
    index.insert(id.to_string(), i);
    i
}

/// What to do with a (user, item) pair rated more than once in one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// Refuse the file, naming both lines.
    #[default]
    Error,
    /// Keep the rating on the later line.
    Last,
    /// Keep the mean of the ratings.
    Mean,
}

/// The layout of a rating file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RatingsFormat {
    /// MatrixMarket if the file says so (`%%MatrixMarket` banner) or ends in `.mtx`/`.mm`, else delimited.
    #[default]
    Auto,
    /// MatrixMarket coordinate: rows are users, columns items, ids are the 1-based indices.
    MatrixMarket,
    /// Delimited lines.
    Delimited,
}

/// How to read a rating file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The layout.
    pub format: RatingsFormat,
    /// Repeated pairs.
    pub duplicates: Duplicates,
    /// Refuse negative values (implicit feedback: values are counts, plays or clicks, whose
    /// confidence `1 + alpha r` must be at least 1).
    pub nonnegative: bool,
}

/// A pair to predict, as read: original ids, a rating if the file has one, and its line.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// User id as written.
    pub user: String,
    /// Item id as written.
    pub item: String,
    /// The rating, when the file has a third column.
    pub rating: Option<f64>,
    /// Line of the file.
    pub line: usize,
}

const USER_NAMES: &[&str] = &["user", "user_id", "userid", "uid", "users", "customer", "customer_id"];
const ITEM_NAMES: &[&str] = &["item", "item_id", "itemid", "iid", "items", "movie", "movie_id", "movieid", "product"];
const RATING_NAMES: &[&str] = &["rating", "ratings", "score", "value", "stars", "r"];

/// Reads the ratings of `path`, mapping ids through `ids` (new ids are added).
pub fn read_ratings(path: &Path, options: &ReadOptions, ids: &mut Ids) -> Result<Vec<Rating>, DataError> {
    let mut lined = if is_matrix_market(path, options.format)? {
        read_matrix_market(path, ids)?
    } else {
        let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
        read_delimited(path, &bytes, ids)?
    };
    if lined.is_empty() {
        return Err(DataError::invalid(path, "no ratings in this file"));
    }
    // Squared errors summed over every rating must stay finite.
    check_magnitudes(path, &lined, lined.len())?;
    if options.nonnegative
        && let Some((r, line)) = lined.iter().find(|(r, _)| r.value < 0.0)
    {
        return Err(DataError::parse(
            path,
            *line,
            format!(
                "negative value {} for implicit feedback: a value is a count (plays, clicks, purchases) and \
                 its confidence 1 + alpha x value must be at least 1",
                r.value
            ),
        ));
    }
    resolve_duplicates(path, &mut lined, options.duplicates, |user, item| {
        (ids.users[user as usize].clone(), ids.items[item as usize].clone())
    })?;
    Ok(lined.into_iter().map(|(r, _)| r).collect())
}

fn read_matrix_market(path: &Path, ids: &mut Ids) -> Result<Vec<(Rating, usize)>, DataError> {
    let coordinates = read_coordinates(path)?;
    if coordinates.pattern {
        return Err(DataError::parse(path, 1, "a 'pattern' file holds no ratings: the field must be real or integer"));
    }
    Ok(coordinates
        .triplets
        .iter()
        .map(|t| {
            let user = ids.user(&(t.row + 1).to_string());
            let item = ids.item(&(t.col + 1).to_string());
            (Rating { user, item, value: t.value }, t.line)
        })
        .collect())
}

/// The fields of a delimited line, trimmed and unquoted.
fn fields(line: &str, separator: Option<char>) -> Vec<&str> {
    fn unquote(f: &str) -> &str {
        let f = f.trim();
        f.strip_prefix('"').and_then(|g| g.strip_suffix('"')).unwrap_or(f)
    }
    match separator {
        Some(c) => line.split(c).map(unquote).collect(),
        None => line.split_whitespace().map(unquote).collect(),
    }
}

/// A column name without its type (`user_id:token` -> `user_id`), lowercased.
fn column_name(field: &str) -> String {
    field.split(':').next().unwrap_or(field).trim().to_ascii_lowercase()
}

fn parse_number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The numbered content lines of a text file (comments and blank lines skipped), counting from `first_line`.
fn content_lines<'a>(
    path: &Path,
    bytes: &'a [u8],
    first_line: usize,
) -> Result<impl Iterator<Item = (usize, &'a str)>, DataError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + first_line;
        DataError::parse(path, line, "not valid UTF-8 text")
    })?;
    Ok(text.lines().enumerate().filter_map(move |(i, line)| {
        let t = line.trim_end_matches('\r');
        let trimmed = t.trim();
        (!trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.starts_with('%')).then_some((i + first_line, t))
    }))
}

fn separator_of(line: &str) -> Option<char> {
    ['\t', ',', ';', '|'].into_iter().find(|&c| line.contains(c))
}

/// Where the user, item and (optional) rating columns are, and whether the first line is a header.
#[derive(Clone, Copy, Debug)]
struct Columns {
    user: usize,
    item: usize,
    rating: Option<usize>,
    header: bool,
}

fn columns_of(first: &[&str], want_rating: bool) -> Columns {
    let names: Vec<String> = first.iter().map(|f| column_name(f)).collect();
    let find = |list: &[&str]| names.iter().position(|n| list.contains(&n.as_str()));
    let (user, item, rating) = (find(USER_NAMES), find(ITEM_NAMES), find(RATING_NAMES));
    let named = user.is_some() && item.is_some();
    let rating_not_number = want_rating && first.get(2).is_some_and(|f| parse_number(f).is_none());
    if named || rating_not_number {
        return Columns {
            user: user.unwrap_or(0),
            item: item.unwrap_or(1),
            rating: if want_rating { Some(rating.unwrap_or(2)) } else { rating },
            header: true,
        };
    }
    Columns { user: 0, item: 1, rating: (want_rating || first.len() >= 3).then_some(2), header: false }
}

/// How a delimited rating file is laid out, as its first content line says.
#[derive(Clone, Copy, Debug)]
pub struct DelimitedLayout {
    separator: Option<char>,
    columns: Columns,
    /// The line of the header, if the file has one.
    header_line: Option<usize>,
}

impl DelimitedLayout {
    fn of(first_line: usize, first: &str) -> Self {
        let separator = separator_of(first);
        let columns = columns_of(&fields(first, separator), true);
        DelimitedLayout { separator, columns, header_line: columns.header.then_some(first_line) }
    }
}

/// Whether the rating file at `path` is MatrixMarket under `format` (by its banner or name).
pub fn is_matrix_market(path: &Path, format: RatingsFormat) -> Result<bool, DataError> {
    Ok(match format {
        RatingsFormat::MatrixMarket => true,
        RatingsFormat::Delimited => false,
        RatingsFormat::Auto => {
            let mut banner = [0u8; 14];
            let mut file = std::fs::File::open(path).map_err(|e| DataError::io(path, e))?;
            let n = std::io::Read::read(&mut file, &mut banner).map_err(|e| DataError::io(path, e))?;
            banner[..n].starts_with(b"%%MatrixMarket")
                || matches!(path.extension().and_then(|e| e.to_str()), Some("mtx" | "mm"))
        }
    })
}

/// The layout of the delimited rating file at `path`, from its first content line (read alone);
/// `None` for a file without one.
pub fn delimited_layout(path: &Path) -> Result<Option<DelimitedLayout>, DataError> {
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = std::io::BufRead::read_until(&mut reader, b'\n', &mut line).map_err(|e| DataError::io(path, e))?;
        if n == 0 {
            return Ok(None);
        }
        number += 1;
        if let Some((_, first)) = content_lines(path, &line, number)?.next() {
            return Ok(Some(DelimitedLayout::of(number, first)));
        }
    }
}

/// Parses delimited rating lines that start at line `first_line` of the file `path` (one process's
/// share of it), with `layout` read from the whole file; ids are interned in `ids` in order of
/// first appearance. Each rating comes with its line.
pub fn parse_delimited_share(
    path: &Path,
    text: &[u8],
    first_line: usize,
    layout: &DelimitedLayout,
    ids: &mut Ids,
) -> Result<Vec<(Rating, usize)>, DataError> {
    let columns = layout.columns;
    let rating_column = columns.rating.unwrap_or(2);
    let needed = columns.user.max(columns.item).max(rating_column) + 1;
    let mut out = Vec::new();
    for (line, text) in content_lines(path, text, first_line)? {
        if Some(line) == layout.header_line {
            continue;
        }
        let f = fields(text, layout.separator);
        if f.len() < needed {
            return Err(DataError::parse(
                path,
                line,
                format!("expected at least {needed} fields (user, item, rating), found {}", f.len()),
            ));
        }
        let value = parse_number(f[rating_column]).ok_or_else(|| {
            DataError::parse(path, line, format!("bad rating '{}': expected a finite number", f[rating_column]))
        })?;
        for (what, id) in [("user", f[columns.user]), ("item", f[columns.item])] {
            if id.is_empty() {
                return Err(DataError::parse(path, line, format!("empty {what} id")));
            }
        }
        let user = ids.user(f[columns.user]);
        let item = ids.item(f[columns.item]);
        out.push((Rating { user, item, value }, line));
    }
    Ok(out)
}

fn read_delimited(path: &Path, bytes: &[u8], ids: &mut Ids) -> Result<Vec<(Rating, usize)>, DataError> {
    let Some((line, first)) = content_lines(path, bytes, 1)?.next() else { return Ok(Vec::new()) };
    parse_delimited_share(path, bytes, 1, &DelimitedLayout::of(line, first), ids)
}

/// Refuses ratings whose squares, summed over `count` ratings, could overflow.
pub fn check_magnitudes(path: &Path, lined: &[(Rating, usize)], count: usize) -> Result<(), DataError> {
    let limit = (f64::MAX / count.max(1) as f64).sqrt() / 4.0;
    if let Some((r, line)) = lined.iter().find(|(r, _)| r.value.abs() > limit) {
        return Err(DataError::parse(
            path,
            *line,
            format!(
                "rating {:e} is too large (its square summed over the ratings would overflow); rescale the ratings",
                r.value
            ),
        ));
    }
    Ok(())
}

/// Applies the duplicate policy in place; the survivors keep the order of their first line.
/// `names` gives a user's and an item's ids for the error message.
pub fn resolve_duplicates(
    path: &Path,
    lined: &mut Vec<(Rating, usize)>,
    policy: Duplicates,
    names: impl Fn(u32, u32) -> (String, String),
) -> Result<(), DataError> {
    let mut order: Vec<usize> = (0..lined.len()).collect();
    order.sort_by_key(|&k| (lined[k].0.user, lined[k].0.item, lined[k].1));
    let mut keep = vec![true; lined.len()];
    let mut start = 0;
    while start < order.len() {
        let key = |k: usize| (lined[order[k]].0.user, lined[order[k]].0.item);
        let mut end = start + 1;
        while end < order.len() && key(end) == key(start) {
            end += 1;
        }
        if end - start > 1 {
            let (first, second) = (lined[order[start]], lined[order[start + 1]]);
            match policy {
                Duplicates::Error => {
                    let (user, item) = names(first.0.user, first.0.item);
                    return Err(DataError::parse(
                        path,
                        second.1,
                        format!(
                            "user '{user}' rates item '{item}' again (first at line {}); choose --duplicates last or mean",
                            first.1
                        ),
                    ));
                }
                Duplicates::Last => lined[order[start]].0.value = lined[order[end - 1]].0.value,
                Duplicates::Mean => {
                    let sum: f64 = order[start..end].iter().map(|&k| lined[k].0.value).sum();
                    lined[order[start]].0.value = sum / (end - start) as f64;
                }
            }
            for &k in &order[start + 1..end] {
                keep[k] = false;
            }
        }
        start = end;
    }
    let mut k = 0;
    lined.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    Ok(())
}

/// Reads pairs to predict: `user,item[,rating]` lines, separator and header found as for ratings.
pub fn read_pairs(path: &Path) -> Result<Vec<Pair>, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    let mut lines = content_lines(path, &bytes, 1)?.peekable();
    let Some(&(_, first)) = lines.peek() else { return Err(DataError::invalid(path, "no pairs in this file")) };
    let separator = separator_of(first);
    let first_fields = fields(first, separator);
    let mut columns = columns_of(&first_fields, false);
    if !columns.header && first_fields.len() >= 3 && parse_number(first_fields[2]).is_none() {
        columns.header = true;
    }
    if columns.header {
        lines.next();
    }
    let mut out = Vec::new();
    for (line, text) in lines {
        let f = fields(text, separator);
        let needed = columns.user.max(columns.item) + 1;
        if f.len() < needed {
            return Err(DataError::parse(path, line, format!("expected at least {needed} fields (user, item)")));
        }
        let rating = match columns.rating.and_then(|c| f.get(c)) {
            Some(text) if !text.is_empty() => Some(parse_number(text).ok_or_else(|| {
                DataError::parse(path, line, format!("bad rating '{text}': expected a finite number"))
            })?),
            _ => None,
        };
        out.push(Pair { user: f[columns.user].to_string(), item: f[columns.item].to_string(), rating, line });
    }
    if out.is_empty() {
        return Err(DataError::invalid(path, "no pairs in this file"));
    }
    Ok(out)
}

/// Splits ratings into a training and a test part: a seeded shuffle, then the last `fraction` is test.
pub fn split(ratings: &[Rating], fraction: f64, seed: u64) -> Result<(Vec<Rating>, Vec<Rating>), String> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(format!("the test fraction must be in (0, 1), got {fraction}"));
    }
    let mut order: Vec<usize> = (0..ratings.len()).collect();
    order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed_5b17));
    let test = ((ratings.len() as f64) * fraction).round() as usize;
    if test == 0 || test == ratings.len() {
        return Err(format!(
            "a test fraction of {fraction} of {} ratings leaves an empty training or test set",
            ratings.len()
        ));
    }
    let cut = ratings.len() - test;
    let mut train: Vec<usize> = order[..cut].to_vec();
    let mut held: Vec<usize> = order[cut..].to_vec();
    train.sort_unstable();
    held.sort_unstable();
    Ok((train.iter().map(|&k| ratings[k]).collect(), held.iter().map(|&k| ratings[k]).collect()))
}

/// Whether the rating of `(user, item)` is among a `fraction` held out for validation: a hash of the
/// pair and `seed`, so a process decides it for its own ratings, with the same answer wherever
/// the rating was read.
pub fn is_held_out(user: u32, item: u32, seed: u64, fraction: f64) -> bool {
    let mut x = (u64::from(user) << 32 | u64::from(item)) ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // SplitMix64's finalizer.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    ((x >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < fraction
}

/// Validation ratings a hold-out must expect for early stopping to be worth the ratings it takes:
/// fewer, and the validation RMSE is too noisy to pick an iteration by.
pub const MIN_VALIDATION: f64 = 100.0;

/// Whether holding out `fraction` of `ratings` ratings for validation leaves enough of them
/// (at least [`MIN_VALIDATION`] expected); below that a run trains on every rating.
pub fn validation_applies(ratings: usize, fraction: f64) -> bool {
    fraction > 0.0 && ratings as f64 * fraction >= MIN_VALIDATION
}

/// Splits ratings into training and validation ones by [`is_held_out`], each in the given order.
pub fn hold_out(ratings: Vec<Rating>, fraction: f64, seed: u64) -> (Vec<Rating>, Vec<Rating>) {
    ratings.into_iter().partition(|r| !is_held_out(r.user, r.item, seed, fraction))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, duplicates: Duplicates) -> Result<(Vec<Rating>, Ids), DataError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.txt");
        std::fs::write(&path, text).unwrap();
        let mut ids = Ids::default();
        let r = read_ratings(
            &path,
            &ReadOptions { format: RatingsFormat::Auto, duplicates, nonnegative: false },
            &mut ids,
        )?;
        Ok((r, ids))
    }

    #[test]
    fn every_separator_and_header_form_reads_the_same_ratings() {
        let forms = [
            "1\t10\t4\t881250949\n2\t10\t3\t881250950\n",
            "user,item,rating\n1,10,4\n2,10,3\n",
            "user_id:token\titem_id:token\trating:float\ttimestamp:float\n1\t10\t4\t1\n2\t10\t3\t2\n",
            "# comment\n1;10;4\n2;10;3\n",
            "1 10 4\n2   10 3\n",
            "timestamp,rating,movie_id,user_id\n5,4,10,1\n6,3,10,2\n",
        ];
        for text in forms {
            let (r, ids) = read(text, Duplicates::Error).unwrap();
            assert_eq!(ids.users, vec!["1", "2"], "{text}");
            assert_eq!(ids.items, vec!["10"], "{text}");
            assert_eq!(r.iter().map(|r| r.value).collect::<Vec<_>>(), vec![4.0, 3.0], "{text}");
        }
    }

    #[test]
    fn bad_values_name_their_line() {
        for (text, line, what) in [
            ("a,b,1\nc,d,x\n", 2, "bad rating 'x'"),
            ("a,b,1\nc,d,NaN\n", 2, "bad rating 'NaN'"),
            ("a,b,1\nc,d,inf\n", 2, "bad rating 'inf'"),
            ("a,b,1\nc,d\n", 2, "expected at least 3 fields"),
            ("a,b,1\n,d,2\n", 2, "empty user id"),
        ] {
            let e = read(text, Duplicates::Error).unwrap_err().to_string();
            assert!(e.contains(&format!("r.txt:{line}: ")) && e.contains(what), "{e}");
        }
        let e = read("# only a comment\n", Duplicates::Error).unwrap_err().to_string();
        assert!(e.contains("no ratings"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plays.tsv");
        std::fs::write(&path, "a\tb\t3\nc\td\t0\ne\tf\t-1\n").unwrap();
        let implicit = ReadOptions { nonnegative: true, ..ReadOptions::default() };
        let e = read_ratings(&path, &implicit, &mut Ids::default()).unwrap_err().to_string();
        assert!(e.contains("plays.tsv:3: ") && e.contains("negative value -1"), "{e}");
        assert_eq!(read_ratings(&path, &ReadOptions::default(), &mut Ids::default()).unwrap().len(), 3);
    }

    #[test]
    fn duplicates_are_refused_or_resolved_as_asked() {
        let text = "a,x,1\nb,x,5\na,x,2\na,x,6\n";
        let e = read(text, Duplicates::Error).unwrap_err().to_string();
        assert!(e.contains("r.txt:3:") && e.contains("first at line 1"), "{e}");
        let (last, _) = read(text, Duplicates::Last).unwrap();
        assert_eq!(last.iter().map(|r| r.value).collect::<Vec<_>>(), vec![6.0, 5.0]);
        let (mean, _) = read(text, Duplicates::Mean).unwrap();
        assert_eq!(mean.iter().map(|r| r.value).collect::<Vec<_>>(), vec![3.0, 5.0]);
    }

    #[test]
    fn matrix_market_ids_are_the_one_based_indices() {
        let (r, ids) =
            read("%%MatrixMarket matrix coordinate real general\n3 4 2\n3 4 2.5\n1 1 1\n", Duplicates::Error).unwrap();
        assert_eq!(ids.users, vec!["3", "1"]);
        assert_eq!(ids.items, vec!["4", "1"]);
        assert_eq!(r[0], Rating { user: 0, item: 0, value: 2.5 });
        let e = read("%%MatrixMarket matrix coordinate real general\n3 4 3\n3 4 2.5\n1 1 1\n", Duplicates::Error)
            .unwrap_err()
            .to_string();
        assert!(e.contains("declares 3 entries but the file has 2"), "{e}");
        let e = read("%%MatrixMarket matrix coordinate real general\n3 4 1\n5 1 2\n", Duplicates::Error)
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.txt:3:") && e.contains("outside 1..=3"), "{e}");
    }

    #[test]
    fn split_is_seeded_and_disjoint() {
        let ratings: Vec<Rating> = (0..100).map(|k| Rating { user: k, item: k % 7, value: f64::from(k) }).collect();
        let (a, b) = split(&ratings, 0.2, 3).unwrap();
        assert_eq!((a.len(), b.len()), (80, 20));
        assert_eq!(split(&ratings, 0.2, 3).unwrap(), (a.clone(), b.clone()));
        assert_ne!(split(&ratings, 0.2, 4).unwrap().1, b);
        let mut all: Vec<u32> = a.iter().chain(&b).map(|r| r.user).collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        assert!(split(&ratings, 1.0, 3).is_err());
    }
}
