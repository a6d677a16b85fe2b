// piranha keys new NAME: a CURVE key pair for a server or a client
// (docs/security.md).
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "piranha/tuplespace/curve.h"

namespace piranha::apps {

void add_keys(CLI::App& app) {
  auto* keys = app.add_subcommand("keys", "CURVE keys for authenticated pools (docs/security.md)");
  keys->require_subcommand(1);
  auto base = std::make_shared<std::string>();
  auto* create = keys->add_subcommand(
      "new", "write a key pair: NAME.key (the secret key, mode 0600) and NAME.pub (the public key)");
  create->add_option("NAME", *base, "the files' path without .key or .pub: ws01, /etc/piranha/server")
      ->required();
  create->footer(
      "Give NAME.key to its owner only (--key, PIRANHA_KEY, an agent's key:). List a client's NAME.pub in "
      "the "
      "server's auth file; give the server's NAME.pub to every client (--server-key, PIRANHA_SERVER_KEY). "
      "Existing files are never overwritten.");
  create->callback([base] {
    std::string name = std::filesystem::path(*base).filename().string();
    if (name.empty() || name == "." || name == "..") {
      std::cerr << "piranha keys new: '" << *base << "' names no file\n";
      throw CLI::RuntimeError(2);
    }
    ts::CurveKeyPair k;
    try {
      k = ts::new_curve_key_pair();
      ts::write_key_files(*base, k, "piranha CURVE key \"" + name + "\"");
    } catch (const std::exception& e) {
      std::cerr << "piranha keys new: " << e.what() << "\n";
      throw CLI::RuntimeError(1);
    }
    std::cout << "wrote " << *base << ".key (secret: keep it to " << name << ", mode 0600) and " << *base
              << ".pub\npublic key: " << k.public_key << "\nin the server's auth file:\n  - {name: " << name
              << ", key: " << name << ".pub, role: ROLE}   # admin, scheduler, agent, job or owner\n";
  });
}

}  // namespace piranha::apps
