fn main() {
    let root = std::env::args().nth(1).unwrap();
    let mut files = vec![];
    let mut stack = vec![std::path::PathBuf::from(root)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else if p.extension().is_some_and(|x| x == "py") {
                files.push(std::fs::read_to_string(&p).unwrap())
            }
        }
    }
    let total: usize = files.iter().map(|f| f.len()).sum();
    let t = std::time::Instant::now();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let mut n = 0;
    for f in &files {
        n += parser.parse(f, None).unwrap().root_node().child_count();
    }
    println!(
        "tree-sitter: {} files {} bytes {:?} ({})",
        files.len(),
        total,
        t.elapsed(),
        n
    );
    let t = std::time::Instant::now();
    let mut m = 0;
    for f in &files {
        m += mzk_analyzer::syntax::python::parse(f, &[]).defined.len();
    }
    println!("module: {:?} ({})", t.elapsed(), m);
}
