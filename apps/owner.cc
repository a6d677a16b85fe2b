// piranha owner: a workstation owner's say over their node. `block` writes
// ("owner", node, "block", start, end) to the system space; the node's agent
// keeps piranhas off the node while a block is in force, whatever its sensors
// say. `allow` removes the node's blocks; `list` shows them. `complain`
// stores ("complaint", node, time, text) for later perusal (`piranha nps
// report` lists it beside what Piranha did on the node then).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "piranha/runtime/sysspace.h"
#include "pool_command.h"

using namespace std::chrono_literals;

namespace piranha::apps {
namespace {

constexpr std::size_t kMaxBlocks = 100'000;

struct OwnerArgs {
  std::shared_ptr<std::string> server;
  std::string node, text;
  std::string for_duration, from, until;
  bool json = false;
};

// Every owner block, of every node.
ts::Template all_blocks() {
  return ts::Template({ts::Field::of(ts::Value(std::string("owner"))), ts::Field::formal(ts::Type::String),
                       ts::Field::of(ts::Value(std::string("block"))), ts::Field::formal(ts::Type::Double),
                       ts::Field::formal(ts::Type::Double)});
}

std::string until_text(double t, double now) {
  return t >= kForeverSeconds ? "allowed again" : local_time(t, now);
}

int block(const OwnerArgs& a) {
  double now = sys::wall_now();
  sys::OwnerBlock b{a.node, now, kForeverSeconds};
  if (!a.for_duration.empty()) {
    if (!a.from.empty() || !a.until.empty())
      throw CommandFailure(2, "--for cannot be combined with --from/--until");
    auto d = parse_duration(a.for_duration);
    if (!d)
      throw CommandFailure(2,
                           "--for \"" + a.for_duration + "\": expected a duration such as 30s, 10m, 2h, 1d");
    b.end = now + *d;
  }
  auto time_of = [now](const std::string& option, const std::string& text) {
    auto t = parse_time(text, now);
    if (!t)
      throw CommandFailure(
          2, option + " \"" + text +
                 "\": expected HH:MM[:SS], YYYY-MM-DD HH:MM[:SS], +DURATION, now, or epoch seconds");
    return *t;
  };
  if (!a.from.empty()) b.start = time_of("--from", a.from);
  if (!a.until.empty()) b.end = time_of("--until", a.until);
  if (b.end <= b.start)
    throw CommandFailure(2, "the block would end (" + local_time(b.end, now) + ") before it starts (" +
                                local_time(b.start, now) + ")");
  auto client = connect(*a.server);
  client->out(sys::kSpace, b.to_tuple());
  client->flush();
  std::cerr << "node " << a.node << " blocked for piranhas from "
            << (b.start <= now ? "now" : local_time(b.start, now)) << " until " << until_text(b.end, now)
            << (b.end >= kForeverSeconds ? " (`piranha owner allow " + a.node + "`)" : std::string()) << "\n";
  if (!client->rd(sys::kSpace, sys::node_template(a.node), 0ms))
    std::cerr << "note: no agent has registered a node named " << a.node << " yet\n";
  return 0;
}

int complain(const OwnerArgs& a) {
  if (a.text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw CommandFailure(2, "the complaint is empty: say what went wrong, e.g. piranha owner complain " +
                                a.node + " \"my build was slow at 14:00\"");
  constexpr std::size_t kMaxText = 4096;
  if (a.text.size() > kMaxText)
    throw CommandFailure(2, "the complaint is " + std::to_string(a.text.size()) + " bytes; at most " +
                                std::to_string(kMaxText) + " are kept");
  auto client = connect(*a.server);
  const sys::Complaint c{a.node, sys::wall_now(), a.text};
  client->out(sys::kSpace, c.to_tuple());
  client->flush();
  std::cerr << "complaint about node " << a.node << " stored (piranha nps report lists it)\n";
  if (!client->rd(sys::kSpace, sys::node_template(a.node), 0ms))
    std::cerr << "note: no agent has registered a node named " << a.node << " yet\n";
  return 0;
}

int allow(const OwnerArgs& a) {
  auto client = connect(*a.server);
  auto removed = client->in_many(sys::kSpace, sys::owner_template(a.node), kMaxBlocks);
  if (removed.empty())
    std::cerr << "node " << a.node << " had no owner blocks\n";
  else
    std::cerr << "node " << a.node << " allowed again: removed " << removed.size() << " block"
              << (removed.size() == 1 ? "" : "s") << "\n";
  return 0;
}

int list(const OwnerArgs& a) {
  auto client = connect(*a.server);
  auto tuples =
      client->rd_many(sys::kSpace, a.node.empty() ? all_blocks() : sys::owner_template(a.node), kMaxBlocks);
  std::vector<sys::OwnerBlock> blocks;
  for (const auto& t : tuples)
    if (auto b = sys::OwnerBlock::from_tuple(t)) blocks.push_back(*b);
  std::sort(blocks.begin(), blocks.end(), [](const auto& x, const auto& y) {
    return std::tie(x.node, x.start) < std::tie(y.node, y.start);
  });
  double now = sys::wall_now();
  auto status = [now](const sys::OwnerBlock& b) {
    return b.covers(now) ? "in force" : b.start > now ? "upcoming" : "expired";
  };
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& b : blocks)
      out.push_back({{"node", b.node},
                     {"start", b.start},
                     {"end", b.end >= kForeverSeconds ? nlohmann::json(nullptr) : nlohmann::json(b.end)},
                     {"status", status(b)}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (blocks.empty()) {
    std::cout << "no owner blocks" << (a.node.empty() ? "" : " for " + a.node) << "\n";
    return 0;
  }
  int name_w = 4;
  for (const auto& b : blocks) name_w = std::max(name_w, static_cast<int>(b.node.size()));
  std::printf("%-*s %-17s %-17s %s\n", name_w, "NODE", "FROM", "UNTIL", "STATUS");
  for (const auto& b : blocks)
    std::printf("%-*s %-17s %-17s %s\n", name_w, b.node.c_str(), local_time(b.start, now).c_str(),
                until_text(b.end, now).c_str(), status(b));
  return 0;
}

}  // namespace

void add_owner(CLI::App& app) {
  auto* owner =
      app.add_subcommand("owner", "a workstation owner's say: keep piranhas off a node, or complain");
  owner->require_subcommand(1);

  auto b = std::make_shared<OwnerArgs>();
  auto* block_cmd =
      owner->add_subcommand("block", "keep piranhas off NODE (now until allowed, or for a while)");
  b->server = add_server_option(*block_cmd);
  block_cmd->add_option("NODE", b->node, "the node (its agent's --node name)")->required();
  block_cmd->add_option("--for", b->for_duration, "block from now for a duration: 30s, 10m, 2h, 1d");
  block_cmd->add_option("--from", b->from,
                        "block from this time: HH:MM[:SS], YYYY-MM-DD HH:MM, +DURATION, now");
  block_cmd->add_option("--until", b->until, "block until this time (same forms as --from)");
  block_cmd->callback([b] { run_command("owner block", *b->server, [&] { return block(*b); }); });

  auto w = std::make_shared<OwnerArgs>();
  auto* allow_cmd = owner->add_subcommand("allow", "remove NODE's blocks: piranhas may run there again");
  w->server = add_server_option(*allow_cmd);
  allow_cmd->add_option("NODE", w->node, "the node")->required();
  allow_cmd->callback([w] { run_command("owner allow", *w->server, [&] { return allow(*w); }); });

  auto k = std::make_shared<OwnerArgs>();
  auto* complain_cmd =
      owner->add_subcommand("complain", "store a complaint about Piranha on NODE, for later perusal");
  k->server = add_server_option(*complain_cmd);
  complain_cmd->add_option("NODE", k->node, "the node")->required();
  complain_cmd->add_option("TEXT", k->text, "what went wrong, in your words")->required();
  complain_cmd->callback([k] { run_command("owner complain", *k->server, [&] { return complain(*k); }); });

  auto l = std::make_shared<OwnerArgs>();
  auto* list_cmd = owner->add_subcommand("list", "list owner blocks (of every node, or of NODE)");
  l->server = add_server_option(*list_cmd);
  list_cmd->add_option("NODE", l->node, "only this node");
  list_cmd->add_flag("--json", l->json, "print one JSON array (end null: until allowed)");
  list_cmd->callback([l] { run_command("owner list", *l->server, [&] { return list(*l); }); });
}

}  // namespace piranha::apps
