#pragma once
// hookset::ClogObserver: a ready-made observer that prints warnings. Its own header, so that the
// core (observer.hpp) does not include <iostream>; the umbrella <hookset/hookset.hpp> has it.

#include <iostream>
#include <string_view>

#include <hookset/observer.hpp>

namespace hookset {

// Writes warnings to std::clog; ignores tracing. Install with set_observer(&instance).
struct ClogObserver : Observer {
  void on_warning(std::string_view slot, std::string_view message) override {
    std::clog << "hookset warning [" << slot << "]: " << message << '\n';
  }
};

}  // namespace hookset
