//! The `fmi-sim` command of rust-fmi's fmi-sim 0.7.0: its options and its `simulate`, the
//! results written as CSV (or printed as a table without `--output-file`). Built here rather
//! than with `cargo install` so that the fmi crates compile once for it and for the tests.

use clap::Parser;
use fmi_sim::options::FmiSimOptions;

fn main() -> anyhow::Result<()> {
    let options = FmiSimOptions::try_parse()?;
    let _logger = flexi_logger::Logger::try_with_env()?.start()?;
    let (outputs, _) = fmi_sim::simulate(&options)?;
    match &options.output_file {
        Some(path) => arrow::csv::WriterBuilder::new()
            .with_delimiter(options.separator as u8)
            .with_header(true)
            .build(std::fs::File::create(path)?)
            .write(&outputs)?,
        None => println!(
            "Outputs:\n{}",
            arrow::util::pretty::pretty_format_batches(&[outputs])?
        ),
    }
    Ok(())
}
