// The strategy classes behind make_strategy (internal to the strategy library).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "piranha/scheduler/strategy.h"
#include "priorities.h"

namespace piranha::sched {

// FCFS, TSK, SRT, SPT, SET, LET, ROR(q): every node gets the top job (with
// requirements, the first in the order that it may run).
class GlobalStrategy : public Strategy {
 public:
  GlobalStrategy(std::string name, GlobalOrder order) : Strategy(std::move(name)), order_(std::move(order)) {}
  void assign(const Invocation& inv, std::span<Slot> out) override;

 private:
  GlobalOrder order_;
  std::vector<Slot> ranked_;
  std::vector<std::size_t> room_;
  std::vector<std::int64_t> given_;  // spill with requirements: nodes given to each job
  FirstAllowed first_;
};

// RND: every node a uniformly random job (of those it may run) at every invocation.
class RandomStrategy : public Strategy {
 public:
  RandomStrategy() : Strategy("RND") {}
  void assign(const Invocation& inv, std::span<Slot> out) override;
  bool uses_rng() const override { return true; }
};

// FAIR, Piranha's native policy. A node without a job (or whose job
// completed) gets a uniformly random job. A node that has one switches to
// each job that arrived since the previous invocation, in queue order, with
// probability 1/q, q = the queue length right after that job arrived
// (Invocation::arrival_queue_length; its 1-based queue position when that is
// not given). With requirements, a node takes only jobs it may run: a random
// one of those, and it leaves a job it may no longer run.
class FairStrategy : public Strategy {
 public:
  FairStrategy() : Strategy("FAIR") {}
  void assign(const Invocation& inv, std::span<Slot> out) override;
  bool uses_rng() const override { return true; }

 private:
  double last_ = -std::numeric_limits<double>::infinity();  // time of the previous invocation
};

// xFIT: the first job in x's order whose task time <= the node's predicted
// average AP length; TSK's top job when none fits (with requirements, of the
// jobs the node may run).
class FitStrategy : public Strategy {
 public:
  FitStrategy(std::string name, GlobalOrder order) : Strategy(std::move(name)), order_(std::move(order)) {}
  void assign(const Invocation& inv, std::span<Slot> out) override;
  bool uses_outlook() const override { return true; }

 private:
  GlobalOrder order_;
  std::vector<Slot> ranked_;
  std::vector<double> prefix_min_;
  // With job requirements: TSK's order for the fallback.
  GlobalOrder tsk_{Priority::TSK};
  std::vector<Slot> tsk_ranked_;
  FirstAllowed fallback_;
};

// xA(T): x's top job where the node's predicted available fraction >= T,
// TSK's top job elsewhere (with requirements, of the jobs the node may run).
class AdaptiveStrategy : public Strategy {
 public:
  AdaptiveStrategy(std::string name, GlobalOrder order, double threshold)
      : Strategy(std::move(name)), order_(std::move(order)), threshold_(threshold) {}
  void assign(const Invocation& inv, std::span<Slot> out) override;
  bool uses_outlook() const override { return true; }

 private:
  GlobalOrder order_;
  double threshold_;
  // With job requirements: x's and TSK's orders, and each node's first allowed in them.
  GlobalOrder tsk_{Priority::TSK};
  std::vector<Slot> ranked_, tsk_ranked_;
  FirstAllowed top_, fallback_;
};

// xMIX(c), beyond the paper: x's top job where the node's predicted average
// AP length (by the MIX predictor, whatever the run's --predictor) is at
// least c times that job's task time, TSK's top job elsewhere (with
// requirements, of the jobs the node may run).
class MixFitStrategy : public Strategy {
 public:
  MixFitStrategy(std::string name, GlobalOrder order, double factor)
      : Strategy(std::move(name)), order_(std::move(order)), factor_(factor) {}
  void assign(const Invocation& inv, std::span<Slot> out) override;
  bool uses_outlook() const override { return true; }
  std::string predictor() const override { return "MIX"; }

 private:
  GlobalOrder order_;
  double factor_;
  // With job requirements: x's and TSK's orders, and each node's first allowed in them.
  GlobalOrder tsk_{Priority::TSK};
  std::vector<Slot> ranked_, tsk_ranked_;
  FirstAllowed top_, fallback_;
};

}  // namespace piranha::sched
