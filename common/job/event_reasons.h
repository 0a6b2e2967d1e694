#pragma once

// Reasons of the Events about a job's children, as kube-controller-manager and the training
// operators name them (users and tools filter on them): shared by the job library and the GM
// controllers that create pods and Services themselves.

#include <string_view>

namespace nereid::job::event_reasons {

inline constexpr std::string_view kSuccessfulCreatePod = "SuccessfulCreatePod";
inline constexpr std::string_view kFailedCreatePod = "FailedCreatePod";
inline constexpr std::string_view kSuccessfulDeletePod = "SuccessfulDeletePod";
inline constexpr std::string_view kFailedDeletePod = "FailedDeletePod";
inline constexpr std::string_view kSuccessfulCreateService = "SuccessfulCreateService";
inline constexpr std::string_view kFailedCreateService = "FailedCreateService";
inline constexpr std::string_view kSuccessfulCreatePodGroup = "SuccessfulCreatePodGroup";
inline constexpr std::string_view kFailedCreatePodGroup = "FailedCreatePodGroup";

}  // namespace nereid::job::event_reasons
