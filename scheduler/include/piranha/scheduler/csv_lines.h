// CsvLines: reads a line-oriented text format (*.avail.csv, *.jobs.csv, an
// imported trace) one line at a time, counting lines, so that every problem
// is reported as InputError "SOURCE:LINE: problem" (piranha/base/input_error.h).
//
//   CsvLines lines(in, "jobs.csv");
//   while (lines.next()) {
//     auto cells = lines.cells();
//     if (cells.size() != 4) lines.fail("expected 4 fields, got " + std::to_string(cells.size()));
//   }
//   if (jobs.empty()) lines.fail("no jobs");  // names the last line read
//
// Blank lines are skipped; so are comments (a line whose first character
// other than a blank is '#') unless the reader is told to keep them, as the
// availability trace does for its "# key: value" metadata. Reads `in` as it
// goes; not thread-safe.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "piranha/base/input_error.h"

namespace piranha::csv {

class CsvLines {
 public:
  enum class Comments : std::uint8_t { Skip, Keep };

  // Reads `in`, whose problems name `source` (a file's path, "<stdin>").
  // `in` must outlive the reader.
  CsvLines(std::istream& in, std::string source, Comments comments = Comments::Skip);

  // Moves to the next line that is not blank (nor a comment, unless kept):
  // false at the end of the input.
  bool next();

  // The current line as read, and trimmed of surrounding blanks.
  const std::string& raw() const { return raw_; }
  const std::string& text() const { return text_; }
  // Whether the current line is a comment (only with Comments::Keep).
  bool is_comment() const { return !text_.empty() && text_[0] == '#'; }
  // The current line's cells: split at commas, each trimmed (csv.h).
  std::vector<std::string> cells() const;

  // The 1-based number of the current line; at the end, of the last line
  // read (0 for empty input).
  int line() const { return line_; }
  const std::string& source() const { return source_; }

  // Throws InputError(source, line(), problem): the current line is at fault.
  [[noreturn]] void fail(const std::string& problem) const;
  // Throws InputError(source, line, problem): an earlier line is at fault.
  [[noreturn]] void fail_at(int line, const std::string& problem) const;

 private:
  std::istream& in_;
  std::string source_;
  Comments comments_;
  std::string raw_;
  std::string text_;
  int line_ = 0;
};

}  // namespace piranha::csv
