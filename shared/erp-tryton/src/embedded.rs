//! The Python side of the backend (`tryton/`: the scripts, the seed, the
//! `draftline` Tryton module with its views, the docs) and the demo story
//! the seed reads (`demo.json`, draftline-erp's [`draftline_erp::demo::DATA`]),
//! embedded in the binary so that [`crate::local`] works from any build,
//! with or without the source tree. A unit test checks that the list is the
//! folder and the story.

/// One embedded file: its path under `tryton/` and its bytes.
pub struct EmbeddedFile {
    /// The path under `tryton/`, `/`-separated.
    pub path: &'static str,
    /// The content.
    pub bytes: &'static [u8],
}

macro_rules! embed {
    ($path:literal) => {
        EmbeddedFile {
            path: $path,
            bytes: include_bytes!(concat!("../tryton/", $path)),
        }
    };
}

/// Every file of `tryton/` and the demo story, sorted by path.
pub const FILES: &[EmbeddedFile] = &[
    embed!("MAPPING.md"),
    embed!("REST.md"),
    embed!("common.sh"),
    embed!("configure.sh"),
    // Not in `tryton/`: the one data file of the demo, which the built-in
    // backend reads too (common.sh finds it here, or in the source tree).
    EmbeddedFile {
        path: "demo.json",
        bytes: draftline_erp::demo::DATA.as_bytes(),
    },
    embed!("modules/draftline/__init__.py"),
    embed!("modules/draftline/access.py"),
    embed!("modules/draftline/access.xml"),
    embed!("modules/draftline/common.py"),
    embed!("modules/draftline/configuration.py"),
    embed!("modules/draftline/configuration.xml"),
    embed!("modules/draftline/draftline.xml"),
    embed!("modules/draftline/invoice.py"),
    embed!("modules/draftline/message.xml"),
    embed!("modules/draftline/party.py"),
    embed!("modules/draftline/product.py"),
    embed!("modules/draftline/purchase.py"),
    embed!("modules/draftline/sale.py"),
    embed!("modules/draftline/stock.py"),
    embed!("modules/draftline/tryton.cfg"),
    embed!("modules/draftline/view/configuration_form.xml"),
    embed!("modules/draftline/view/document_tree.xml"),
    embed!("modules/draftline/view/invoice_form.xml"),
    embed!("modules/draftline/view/location_form.xml"),
    embed!("modules/draftline/view/party_form.xml"),
    embed!("modules/draftline/view/price_list_line_form.xml"),
    embed!("modules/draftline/view/price_list_line_tree.xml"),
    embed!("modules/draftline/view/price_unit_form.xml"),
    embed!("modules/draftline/view/price_unit_tree.xml"),
    embed!("modules/draftline/view/purchase_form.xml"),
    embed!("modules/draftline/view/sale_form.xml"),
    embed!("requirements.txt"),
    embed!("sao/package-lock.json"),
    embed!("sao/package.json"),
    embed!("seed.py"),
    embed!("serve.sh"),
    embed!("setup.sh"),
];

/// A short hash of every path and content: the name of the folder the files are written to.
pub fn digest() -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for file in FILES {
        hash.update(file.path.as_bytes());
        hash.update([0u8]);
        hash.update((file.bytes.len() as u64).to_le_bytes());
        hash.update(file.bytes);
    }
    hex::encode(hash.finalize()).chars().take(16).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name == "__pycache__" || name.ends_with(".pyc") {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_file_of_the_tryton_folder_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tryton");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.push("demo.json".to_owned());
        on_disk.sort();
        let embedded: Vec<&str> = FILES.iter().map(|f| f.path).collect();
        assert_eq!(embedded, on_disk, "add the new file to src/embedded.rs");
        let mut sorted = embedded.clone();
        sorted.sort();
        assert_eq!(embedded, sorted);
        assert_eq!(digest().len(), 16);
    }

    #[test]
    fn the_demo_story_is_draftline_erps_file() {
        let story = FILES.iter().find(|f| f.path == "demo.json").unwrap();
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../erp/demo/demo.json");
        assert_eq!(story.bytes, std::fs::read(file).unwrap());
    }
}
