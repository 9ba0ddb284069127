/*
 * Logging OpenVINO's exceptions through ET_LOG.
 *
 * OpenVINO prefixes its message with an "Exception from <file>:<line>:" line for
 * each level it passes through; ET_LOG cuts a message at a few hundred bytes, so
 * those lines alone could fill it and hide the reason.
 */
#pragma once

#include <exception>
#include <string>

namespace executorch_openvino {

/// The exception's text without OpenVINO's "Exception from <file>:<line>:" lines.
std::string openvino_reason(const std::exception& error);

/// Logs "<context>: <reason>" at Error level, over as many ET_LOG lines as it needs.
void log_openvino_error(const std::string& context, const std::exception& error);

}  // namespace executorch_openvino
