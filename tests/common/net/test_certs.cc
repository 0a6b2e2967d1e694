#include "tests/common/net/test_certs.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace nereid::testing {
namespace {

// Owns a temp dir for the life of the process.
class TempCertDir final : public OwnedCertSet {
 public:
  TempCertDir(const char* tag, const std::string& nodes) {
    std::string pattern = (std::filesystem::temp_directory_path() / "nereid-certs-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
    set_.dir = root_ + "/" + tag;
    const std::string command = std::string("'") + NEREID_GEN_CERTS_SCRIPT + "' '" + set_.dir +
                                "' " + nodes + " >/dev/null";
    if (std::system(command.c_str()) != 0) {
      throw std::runtime_error("gen-certs.sh failed: " + command);
    }
    set_.ca = set_.dir + "/ca.crt";
    set_.gm_cert = set_.dir + "/globalmanager.crt";
    set_.gm_key = set_.dir + "/globalmanager.key";
  }
  ~TempCertDir() override {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  const CertSet& set() const override { return set_; }

 private:
  std::string root_;
  CertSet set_;
};

}  // namespace

std::unique_ptr<OwnedCertSet> MakeCertSet(const std::string& nodes) {
  return std::make_unique<TempCertDir>("set", nodes);
}

const CertSet& TestCerts() {
  static const TempCertDir dir("trusted", "edge-a edge-b edge-c");
  return dir.set();
}

const CertSet& UntrustedCerts() {
  static const TempCertDir dir("untrusted", "edge-a");
  return dir.set();
}

}  // namespace nereid::testing
