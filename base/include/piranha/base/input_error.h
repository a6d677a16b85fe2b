// InputError: the one error type for bad input, whatever reads it: a file (a
// trace, a job list, an NPS or trellis program, the agent's YAML, the
// server's auth file), an option's value ("--strategy") or standard input
// ("<stdin>"). Code that parses what a user gave throws it; code that runs on
// a user's behalf (the command-line program) catches it and shows what().
// The wire has its own type (piranha/base/wire_error.h): a bad frame comes
// from a peer, not from the user.
//
// what() is "SOURCE:LINE: message", or "SOURCE: message" when no one line is
// at fault (the file cannot be opened, an option's value). LINE is 1-based.
// For example:
//   agent.yaml:7: unknown key 'laod' in availability (expected one of: ...)
//   jobs.csv: cannot open the job file
//   strategy "SRTA(x)": parameter "x" is not a number
// A name parsed without knowing where it came from (a strategy, predictor or
// algorithm name) uses a description of the name itself as its source.
//
// Thread-safety: an InputError is immutable once made.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace piranha {

class InputError : public std::runtime_error {
 public:
  // `line` is 1-based, 0 when no one line is at fault.
  InputError(std::string source, int line, std::string message)
      : std::runtime_error(format(source, line, message)),
        source_(std::move(source)),
        line_(line),
        message_(std::move(message)) {}
  // An error of the input as a whole: line() is 0.
  InputError(std::string source, std::string message)
      : InputError(std::move(source), 0, std::move(message)) {}

  // The file, "--option", "<stdin>" or description the problem is in.
  const std::string& source() const noexcept { return source_; }
  // 1-based; 0 when no one line is at fault.
  int line() const noexcept { return line_; }
  // The problem, without the "SOURCE:LINE: " prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  static std::string format(const std::string& source, int line, const std::string& message) {
    return source + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message;
  }

  std::string source_;
  int line_;
  std::string message_;
};

}  // namespace piranha
