//! The shaped generator: the size asked for, every user present, no pair twice, stars, skew, and the
//! same ratings for the same seed.

use strads_mf::generate::{ShapedSpec, generate_shaped};

#[test]
fn shaped_ratings_have_the_size_skew_and_scale_asked_for() {
    let spec = ShapedSpec { users: 6000, items: 900, ratings: 120_000, rank: 5, noise: 0.5, seed: 3 };
    let mut calls = Vec::new();
    let ratings = generate_shaped(&spec, &mut |done| calls.push(done));
    assert_eq!(calls.last(), Some(&spec.users), "progress ends at every user");
    let n = ratings.len() as f64;
    assert!((n / spec.ratings as f64 - 1.0).abs() < 0.1, "{n} ratings for {} asked", spec.ratings);
    let mut per_user = vec![0usize; spec.users];
    let mut per_item = vec![0usize; spec.items];
    for pair in ratings.windows(2) {
        assert!((pair[0].user, pair[0].item) < (pair[1].user, pair[1].item), "sorted, no pair twice");
    }
    for r in &ratings {
        per_user[r.user as usize] += 1;
        per_item[r.item as usize] += 1;
        assert!(r.value.fract() == 0.0 && (1.0..=5.0).contains(&r.value), "stars: {}", r.value);
    }
    assert!(per_user.iter().all(|&c| c >= 1 && c <= spec.items / 2), "every user rates 1 to items/2 items");
    let median = |v: &mut Vec<usize>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let (mut users, mut items) = (per_user.clone(), per_item.clone());
    let (mu, mi) = (median(&mut users), median(&mut items));
    assert!(*users.last().unwrap() > 10 * mu, "heavy users: max {} against median {mu}", users.last().unwrap());
    assert!(*items.last().unwrap() > 10 * mi, "popular items: max {} against median {mi}", items.last().unwrap());
    let mean = ratings.iter().map(|r| r.value).sum::<f64>() / n;
    assert!((3.0..4.0).contains(&mean), "a mean like real stars: {mean}");
    assert_eq!(generate_shaped(&spec, &mut |_| {}), ratings, "the same seed gives the same ratings");
    assert_ne!(generate_shaped(&ShapedSpec { seed: 4, ..spec }, &mut |_| {}), ratings);
}
